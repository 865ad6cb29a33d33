package transcript

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReadKeptIsTheOneReader reads a rebuild record's kept messages: all
// of them, one at a time, none for a record that keeps none, and an error
// naming the rebuild when the blob is missing or damaged.
func TestReadKeptIsTheOneReader(t *testing.T) {
	gone := []Superseded{{Index: 2, Message: Message{Role: User, Blocks: []Block{{Type: BlockText, Text: "fix the bug"}}}}, {Index: 3, Message: Message{Role: Assistant}}}
	blobData, _ := json.Marshal(gone)
	rec := RebuildRecord{Reason: "compaction", Time: time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC), Superseded: "abc", Cycle: 1}
	data, _ := json.Marshal(rec)
	blobs := map[string][]byte{"abc": blobData}
	blob := func(sha string) ([]byte, error) {
		if b, ok := blobs[sha]; ok {
			return b, nil
		}
		return nil, errors.New("no such blob")
	}
	k, ok, err := ReadKept(data, blob, nil)
	if err != nil || !ok || k.Len() != 2 || k.Record.Reason != "compaction" {
		t.Fatalf("ReadKept = %+v, %v, %v", k, ok, err)
	}
	all, err := k.All()
	if err != nil || len(all) != 2 || all[0].Index != 2 || all[0].Message.Text() != "fix the bug" {
		t.Fatalf("All = %+v, %v", all, err)
	}
	if g, ok := k.At(1); !ok || g.Index != 3 {
		t.Errorf("At(1) = %+v, %v", g, ok)
	}
	if _, ok := k.At(2); ok {
		t.Error("At past the end is ok")
	}
	none, _ := json.Marshal(RebuildRecord{Reason: "purge"})
	for _, d := range [][]byte{none, []byte("not json")} {
		if _, ok, err := ReadKept(d, blob, nil); ok || err != nil {
			t.Errorf("%s: ok %v, err %v; want neither", d, ok, err)
		}
	}
	blobs["abc"] = []byte(`[{"index":`)
	if _, _, err := ReadKept(data, blob, nil); err == nil || !strings.Contains(err.Error(), "compaction of 2026-12-02 09:30") {
		t.Errorf("damaged blob: %v", err)
	}
	delete(blobs, "abc")
	if _, _, err := ReadKept(data, blob, nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing blob: %v", err)
	}
	other := func(r RebuildRecord) bool { return r.Cycle == 2 }
	if _, ok, err := ReadKept(data, blob, other); ok || err != nil {
		t.Errorf("a record want turns down: ok %v, err %v; its blob must not be read", ok, err)
	}
}
