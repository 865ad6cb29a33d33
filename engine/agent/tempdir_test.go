package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestSessionTempDirOutlivesTheSession is the regression test for session
// temp folders left behind (with whatever commands put there) after the
// session ended.
func TestSessionTempDirOutlivesTheSession(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Reply{Content: "ok"}), nil)
	h.cfg.TempRoot = filepath.Join(t.TempDir(), "tmp")
	s := h.session("s1")
	dir := s.env.TempDir
	if dir == "" {
		t.Fatal("the session got no temp dir")
	}
	if err := os.WriteFile(filepath.Join(dir, "left"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the session's temp dir %s is still there after Close (%v)", dir, err)
	}
}
