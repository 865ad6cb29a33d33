package rewind

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

func openStore(t *testing.T) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func logOf(msgs ...transcript.Message) []transcript.Entry {
	l := transcript.NewAppendLog(nil, transcript.WireRules{})
	for _, m := range msgs {
		l.Append(m)
	}
	return l.Entries()
}

// A session from before turns were recorded numbers the user messages of
// its log from 1; a turn's log index follows its message, and a superseded
// turn or one whose message is gone has none.
func TestTurnsAreNumberedAgainstTheLog(t *testing.T) {
	st := openStore(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := transcript.UserText("", "first", t0)
	b := transcript.UserText("", "second", t0.Add(time.Minute))
	entries := logOf(a, transcript.AssistantReply("ok", "", nil, t0), b)
	r := Open(Options{Store: st, ID: "s", Workspace: t.TempDir(), Cycle: 1, Entries: entries})
	got := Number(r.List(), entries)
	if len(got) != 2 || got[0].N != 1 || got[0].LogIndex != 0 || got[1].N != 2 || got[1].LogIndex != 2 {
		t.Fatalf("turns %+v; want 1 at index 0 and 2 at index 2", got)
	}
	if r.Next() != 3 {
		t.Errorf("next turn %d; want 3", r.Next())
	}
	// The log lost the first message (a compaction): it has no index now.
	if got := Number(r.List(), entries[1:]); got[0].LogIndex != -1 || got[1].LogIndex != 1 {
		t.Errorf("after the first message went: %+v", got)
	}
	if _, err := r.Find(9, entries); err == nil || !strings.Contains(err.Error(), "its turns are 1 to 2") {
		t.Errorf("Find(9) = %v; want an error naming the turns there are", err)
	}
}

// Begin and Supersede change the list at once, store it in the commit they
// return, and put it back when that commit fails.
func TestTurnListChangesAreStoredOrTakenBack(t *testing.T) {
	st := openStore(t)
	if err := st.Update(func(tx *storage.Tx) error { return tx.PutSession(storage.Session{ID: "s"}) }); err != nil {
		t.Fatal(err)
	}
	r := Open(Options{Store: st, ID: "s", Workspace: t.TempDir(), Cycle: 1})
	m := transcript.UserText("", "do it", time.Now())
	_, undo := r.Begin(1, 1, &m, Snapshot{WorkingSet: []string{"a.go"}})
	if len(r.List()) != 1 {
		t.Fatal("Begin did not add the turn at once")
	}
	undo()
	if len(r.List()) != 0 {
		t.Fatal("undo did not take the turn back")
	}
	store, _ := r.Begin(1, 1, &m, Snapshot{WorkingSet: []string{"a.go"}})
	if err := st.Update(store); err != nil {
		t.Fatal(err)
	}
	snap, ok := r.SnapshotOf(1)
	if !ok || len(snap.WorkingSet) != 1 || snap.WorkingSet[0] != "a.go" {
		t.Errorf("snapshot of turn 1 = %+v, %v", snap, ok)
	}
	if _, ok := r.SnapshotOf(2); ok {
		t.Error("a turn never begun has a snapshot")
	}
	again := Open(Options{Store: st, ID: "s", Workspace: t.TempDir(), Cycle: 1})
	if l := again.List(); len(l) != 1 || l[0].Text != "do it" {
		t.Fatalf("reopened turns %+v", l)
	}
	_, undoSup := again.Supersede(1)
	if !again.List()[0].Superseded {
		t.Fatal("Supersede did not mark the turn")
	}
	undoSup()
	if again.List()[0].Superseded {
		t.Fatal("undo did not put the turn back")
	}
	storeSup, _ := again.Supersede(1)
	if err := st.Update(storeSup); err != nil {
		t.Fatal(err)
	}
	if l := Open(Options{Store: st, ID: "s", Workspace: t.TempDir(), Cycle: 1}).List(); !l[0].Superseded {
		t.Error("the stored list lost the superseded mark")
	}
	if got := WhyNotInLog(Turn{N: 1, Cycle: 1}, 2); !strings.Contains(got, "cycle 1") {
		t.Errorf("why not in log: %q", got)
	}
}

// Without checkpoints (a workspace folder that is gone) every file
// operation says why, and a tool that would change a file refuses.
func TestMissingCheckpointsAreReported(t *testing.T) {
	st := openStore(t)
	gone := filepath.Join(t.TempDir(), "gone")
	r := Open(Options{Store: st, ID: "s", Workspace: gone, Cycle: 1})
	if _, err := r.Changes(); err == nil || !strings.Contains(err.Error(), gone) {
		t.Errorf("Changes() = %v; want an error naming the folder", err)
	}
	rec := r.Record()
	if err := rec.BeforeWrite("a.txt"); err == nil {
		t.Error("a write was recorded without checkpoints")
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, err := r.RestoreFiles(1, false); err == nil {
		t.Error("RestoreFiles without checkpoints did not fail")
	}
}
