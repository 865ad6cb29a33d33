package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openTest opens a new store in a temporary directory. At cleanup it closes
// the store and checks the file: bbolt's consistency check must pass and the
// file must open again.
func openTest(t testing.TB) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkDB(t, path)
	})
	return s
}

// checkDB runs bbolt's consistency check on the closed database at path and
// opens it again with Open.
func checkDB(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Errorf("reopening %s with bbolt: %v", path, err)
		return
	}
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("bbolt check of %s: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Errorf("bbolt check: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("closing bbolt: %v", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Errorf("reopening %s: %v", path, err)
		return
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after reopen: %v", err)
	}
}

// reopen closes s and opens its file again.
func reopen(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path(), Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	return s2
}

func mustPutSession(t testing.TB, s *Store, id string) Session {
	t.Helper()
	now := time.Now()
	sess := Session{ID: id, Title: "title " + id, Created: now, Updated: now, Cycle: 1}
	if err := s.PutSession(sess); err != nil {
		t.Fatalf("PutSession(%q): %v", id, err)
	}
	return sess
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one matching %v", err, target)
	}
	if strings.HasPrefix(err.Error(), "storage: ") || !strings.Contains(err.Error(), "; ") {
		t.Errorf("error %q is not a sentence saying what to do", err)
	}
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSessionRoundTrip(t *testing.T) {
	s := openTest(t)
	created := time.Date(2025, 3, 1, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	want := Session{
		ID: "s1", Title: "Fix the parser", Workspace: "/src/p", Model: "m-large",
		Created: created, Updated: created.Add(time.Hour), Cycle: 3,
		Extra: json.RawMessage(`{"budget":1000,"tools":["read","write"]}`),
	}
	if err := s.PutSession(want); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	got, err := s.Session("s1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) {
		t.Errorf("times = %v, %v; want %v, %v", got.Created, got.Updated, want.Created, want.Updated)
	}
	got.Created, got.Updated = want.Created, want.Updated
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Session = %+v, want %+v", got, want)
	}

	_, err = s.Session("nope")
	wantErr(t, err, ErrNotFound)
	if !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("error %q does not name the session", err)
	}
	wantErr(t, s.PutSession(Session{}), ErrInvalid)
	wantErr(t, s.PutSession(Session{ID: "x", Extra: json.RawMessage(`{`)}), ErrInvalid)

	// Overwrite.
	want.Title = "renamed"
	if err := s.PutSession(want); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Session("s1"); got.Title != "renamed" {
		t.Errorf("Title after overwrite = %q", got.Title)
	}
}

func TestSessionsOrder(t *testing.T) {
	s := openTest(t)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, x := range []struct {
		id  string
		upd time.Duration
	}{{"c", 1}, {"a", 3}, {"b", 3}, {"d", 2}} {
		if err := s.PutSession(Session{ID: x.id, Updated: base.Add(x.upd * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	if got := strings.Join(ids, ","); got != "a,b,d,c" {
		t.Errorf("Sessions order = %s, want a,b,d,c", got)
	}
}

func TestAppendAndLog(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")

	var seqs []uint64
	for i := range 5 {
		cycle := 1 + i%2
		seq, err := s.Append("s", cycle, []byte(fmt.Sprintf("m%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) > 0 && seq <= seqs[len(seqs)-1] {
			t.Fatalf("sequence %d after %d is not increasing", seq, seqs[len(seqs)-1])
		}
		seqs = append(seqs, seq)
	}

	recs, err := s.Log("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{{seqs[0], []byte("m0")}, {seqs[2], []byte("m2")}, {seqs[4], []byte("m4")}}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("Log(1) = %v, want %v", recs, want)
	}
	if n, err := s.LogLen("s", 2); err != nil || n != 2 {
		t.Errorf("LogLen(2) = %d, %v; want 2", n, err)
	}
	if c, err := s.Cycles("s"); err != nil || !reflect.DeepEqual(c, []int{1, 2}) {
		t.Errorf("Cycles = %v, %v; want [1 2]", c, err)
	}

	// Returned data is a copy.
	recs[0].Data[0] = 'X'
	if again, _ := s.Log("s", 1); string(again[0].Data) != "m0" {
		t.Errorf("modifying a returned record changed the store: %q", again[0].Data)
	}

	// Data passed to Append is copied, even inside the same transaction.
	buf := []byte("original")
	err = s.Update(func(tx *Tx) error {
		_, err := tx.Append("s", 3, buf)
		copy(buf, "CHANGED!")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Log("s", 3); len(recs) != 1 || string(recs[0].Data) != "original" {
		t.Errorf("Log(3) = %v, want the original bytes", recs)
	}

	// LogRange starts at fromSeq and stops on error.
	var got []uint64
	err = s.LogRange("s", 1, seqs[2], func(r Record) error {
		got = append(got, r.Seq)
		return nil
	})
	if err != nil || !reflect.DeepEqual(got, []uint64{seqs[2], seqs[4]}) {
		t.Errorf("LogRange from %d = %v, %v", seqs[2], got, err)
	}
	stop := errors.New("stop")
	n := 0
	err = s.LogRange("s", 1, 0, func(Record) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("LogRange with stopping fn = %v after %d calls", err, n)
	}

	// Unknown sessions and cycles read as empty; writing to them fails.
	if recs, err := s.Log("s", 9); err != nil || len(recs) != 0 {
		t.Errorf("Log of empty cycle = %v, %v", recs, err)
	}
	if recs, err := s.Log("ghost", 1); err != nil || len(recs) != 0 {
		t.Errorf("Log of unknown session = %v, %v", recs, err)
	}
	_, err = s.Append("ghost", 1, nil)
	wantErr(t, err, ErrNotFound)
	_, err = s.Append("s", 0, nil)
	wantErr(t, err, ErrInvalid)
	_, err = s.Log("", 1)
	wantErr(t, err, ErrInvalid)
}

func TestSequencesSurviveReopen(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	last, err := s.Append("s", 1, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	next, err := s.Append("s", 2, []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if next <= last {
		t.Errorf("sequence after reopen = %d, want > %d", next, last)
	}
}

func TestReplaceLog(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	var maxSeq uint64
	for i := range 3 {
		seq, err := s.Append("s", 1, []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		maxSeq = seq
	}
	other, err := s.Append("s", 2, []byte("other cycle"))
	if err != nil {
		t.Fatal(err)
	}
	maxSeq = max(maxSeq, other)

	if err := s.ReplaceLog("s", 1, [][]byte{[]byte("summary"), []byte("tail")}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Log("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0].Data) != "summary" || string(recs[1].Data) != "tail" {
		t.Fatalf("Log after ReplaceLog = %v", recs)
	}
	if recs[0].Seq <= maxSeq || recs[1].Seq <= recs[0].Seq {
		t.Errorf("sequences after ReplaceLog = %d, %d; want increasing and > %d", recs[0].Seq, recs[1].Seq, maxSeq)
	}
	next, err := s.Append("s", 1, []byte("after"))
	if err != nil || next <= recs[1].Seq {
		t.Errorf("Append after ReplaceLog = %d, %v; want > %d", next, err, recs[1].Seq)
	}
	if recs, _ := s.Log("s", 2); len(recs) != 1 || recs[0].Seq != other {
		t.Errorf("ReplaceLog touched another cycle: %v", recs)
	}

	if err := s.ReplaceLog("s", 1, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.LogLen("s", 1); n != 0 {
		t.Errorf("LogLen after empty ReplaceLog = %d", n)
	}
	if c, _ := s.Cycles("s"); !reflect.DeepEqual(c, []int{1, 2}) {
		t.Errorf("Cycles after empty ReplaceLog = %v", c)
	}
	wantErr(t, s.ReplaceLog("ghost", 1, nil), ErrNotFound)
}

func TestBlobs(t *testing.T) {
	s := openTest(t)
	data := bytes.Repeat([]byte("blob "), 1000)
	sum := sha256.Sum256(data)
	sha, err := s.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	if sha != hex.EncodeToString(sum[:]) {
		t.Errorf("PutBlob key = %s, want %x", sha, sum)
	}
	again, err := s.PutBlob(data)
	if err != nil || again != sha {
		t.Errorf("second PutBlob = %s, %v", again, err)
	}
	got, err := s.Blob(sha)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("Blob = %d bytes, %v", len(got), err)
	}
	empty, err := s.PutBlob(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Blob(empty); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty Blob = %v, %v", got, err)
	}
	_, err = s.Blob(strings.Repeat("0", 64))
	wantErr(t, err, ErrNotFound)
	_, err = s.Blob("not-a-hash")
	wantErr(t, err, ErrInvalid)
	_, err = s.Blob(strings.ToUpper(sha))
	wantErr(t, err, ErrInvalid)
}

func TestRecords(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	for _, kind := range []Kind{KindRebuild, KindStatus, KindLedger, KindArchive} {
		if _, ok, err := s.LastRecord(kind, "s"); err != nil || ok {
			t.Errorf("LastRecord(%s) of empty list = %v, %v", kind, ok, err)
		}
		var want []Record
		for i := range 3 {
			data := []byte(fmt.Sprintf("%s-%d", kind, i))
			seq, err := s.AddRecord(kind, "s", data)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) > 0 && seq <= want[len(want)-1].Seq {
				t.Errorf("%s sequence %d is not increasing", kind, seq)
			}
			want = append(want, Record{seq, data})
		}
		got, err := s.Records(kind, "s")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Records(%s) = %v, %v; want %v", kind, got, err, want)
		}
		last, ok, err := s.LastRecord(kind, "s")
		if err != nil || !ok || !reflect.DeepEqual(last, want[2]) {
			t.Errorf("LastRecord(%s) = %v, %v, %v", kind, last, ok, err)
		}
	}
	_, err := s.AddRecord("bogus", "s", nil)
	wantErr(t, err, ErrInvalid)
	_, err = s.Records("bogus", "s")
	wantErr(t, err, ErrInvalid)
	_, _, err = s.LastRecord("", "s")
	wantErr(t, err, ErrInvalid)
	_, err = s.AddRecord(KindLedger, "ghost", nil)
	wantErr(t, err, ErrNotFound)
}

func TestStateAndSettings(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")

	if v, err := s.State("s", "checklist"); v != nil || err != nil {
		t.Errorf("absent State = %v, %v; want nil, nil", v, err)
	}
	if err := s.PutState("s", "checklist", []byte(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutState("s", "empty", []byte{}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if v, err := s.State("s", "checklist"); string(v) != `[1,2]` || err != nil {
		t.Errorf("State = %q, %v", v, err)
	}
	if v, err := s.State("s", "empty"); v == nil || len(v) != 0 || err != nil {
		t.Errorf("empty State = %#v, %v; want a non-nil empty slice", v, err)
	}
	if err := s.DeleteState("s", "checklist"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.State("s", "checklist"); v != nil {
		t.Errorf("State after DeleteState = %q", v)
	}
	wantErr(t, s.PutState("ghost", "k", nil), ErrNotFound)
	wantErr(t, s.PutState("s", "", nil), ErrInvalid)

	if v, err := s.Setting("theme"); v != nil || err != nil {
		t.Errorf("absent Setting = %v, %v; want nil, nil", v, err)
	}
	if err := s.PutSetting("theme", []byte("dark")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Setting("theme"); string(v) != "dark" || err != nil {
		t.Errorf("Setting = %q, %v", v, err)
	}
	if err := s.DeleteSetting("theme"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSetting("theme"); err != nil {
		t.Errorf("second DeleteSetting: %v", err)
	}
	if v, _ := s.Setting("theme"); v != nil {
		t.Errorf("Setting after delete = %q", v)
	}
	wantErr(t, s.PutSetting("", nil), ErrInvalid)
}

func TestBlobByPrefix(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "tally.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var sha string
	if err := st.Update(func(tx *Tx) error { sha, err = tx.PutBlob([]byte("dropped text")); return err }); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{sha, sha[:MinBlobPrefix], sha[:20]} {
		data, full, err := st.BlobByPrefix(key)
		if err != nil || string(data) != "dropped text" || full != sha {
			t.Errorf("BlobByPrefix(%q) = %q, %q, %v", key, data, full, err)
		}
	}
	if _, _, err := st.BlobByPrefix(sha[:MinBlobPrefix-1]); !errors.Is(err, ErrInvalid) {
		t.Errorf("a short prefix: %v", err)
	}
	if _, _, err := st.BlobByPrefix("000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown prefix: %v", err)
	}
}
