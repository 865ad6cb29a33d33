package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/storage"
	"github.com/tally-dev/tally/storage/storagetest"
)

// A data file damaged past its header was reported by `tally sessions`
// (the read that reached the damaged page failed) while `tally run` wrote
// a new session into it. `tally run` now refuses to write to a file that
// fails Open's check, saying how to recover, and leaves it as it was.
func TestDamagedDataFileRefusesWritesFromTheCommandLine(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(data, "tally.db")
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := st.PutSession(storage.Session{ID: "old", Title: "t", Workspace: t.TempDir(), Created: now, Updated: now, Cycle: 1}); err != nil {
		t.Fatal(err)
	}
	err = st.Update(func(tx *storage.Tx) error {
		for i := range 300 {
			if _, err := tx.Append("old", 1, bytes.Repeat([]byte{byte(i)}, 1500)); err != nil {
				return err
			}
		}
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := storagetest.DamageLeaf(t, path)

	srv := llmtest.New(llmtest.Sequence(llmtest.Text("hi")))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	_, stderr, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", t.TempDir(), "hello")
	if code != ExitFail || !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "tally export") {
		t.Errorf("tally run on a damaged file: exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Error("tally run wrote to the damaged file")
	}
	if len(srv.Requests()) != 0 {
		t.Error("tally run asked the model before refusing")
	}
}
