package workbench

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/filehistory"
)

func TestCheckpointCapReachesTheSession(t *testing.T) {
	w := bench(t, nil)
	s := w.Settings()
	s.CheckpointCap = 12345
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	cfg, err := w.Config(SessionOptions{})
	if err != nil && !errors.Is(err, ErrNoModel) {
		t.Fatal(err)
	}
	if cfg.CheckpointBytes != 12345 {
		t.Errorf("CheckpointBytes = %d; want the saved cap", cfg.CheckpointBytes)
	}
}

func TestChangesReadsASessionsCheckpoints(t *testing.T) {
	w := bench(t, nil)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	cfg, err := w.Config(SessionOptions{})
	if err != nil && !errors.Is(err, ErrNoModel) {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	if _, err := agent.Create(cfg, "c", ws, ""); err != nil {
		t.Fatal(err)
	}
	// What the session's tools do through its recorder.
	cw, err := filehistory.Open(w.store, ws, filehistory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := cw.Recorder("c")
	if err != nil {
		t.Fatal(err)
	}
	rec.BeginTurn(1)
	rec.BeforeWrite("a.txt")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("two\n"), 0o644)
	rec.AfterWrite("a.txt")

	changes, err := w.Changes("c", 0)
	if err != nil || len(changes) != 1 || changes[0].Path != "a.txt" || !changes[0].Restorable {
		t.Fatalf("Changes = %+v, %v", changes, err)
	}
	if _, err := w.Changes("missing", 0); err == nil {
		t.Error("Changes of an unknown session succeeded")
	}
}
