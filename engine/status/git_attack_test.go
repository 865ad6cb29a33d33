//go:build unix

package status

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A repository whose .git/HEAD is a FIFO hung the session before the first
// request; one linked to /dev/zero grew memory without bound. Both now
// read as "no branch" at once.
func TestGitBranchRefusesSpecialHeads(t *testing.T) {
	t.Run("fifo", func(t *testing.T) {
		ws := t.TempDir()
		os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
		if err := syscall.Mkfifo(filepath.Join(ws, ".git", "HEAD"), 0o644); err != nil {
			t.Skipf("cannot make a FIFO here: %v", err)
		}
		if b := GitBranch(ws); b != "" {
			t.Errorf("branch %q from a FIFO", b)
		}
	})
	t.Run("dev zero", func(t *testing.T) {
		ws := t.TempDir()
		os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
		if err := os.Symlink("/dev/zero", filepath.Join(ws, ".git", "HEAD")); err != nil {
			t.Fatal(err)
		}
		if b := GitBranch(ws); b != "" {
			t.Errorf("branch %q from /dev/zero", b)
		}
	})
	t.Run("worktree pointer to a fifo", func(t *testing.T) {
		ws := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(ws, ".git"), 0o644); err != nil {
			t.Skipf("cannot make a FIFO here: %v", err)
		}
		if b := GitBranch(ws); b != "" {
			t.Errorf("branch %q from a FIFO .git", b)
		}
	})
	t.Run("regular head still works", func(t *testing.T) {
		ws := t.TempDir()
		os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
		os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		if b := GitBranch(ws); b != "main" {
			t.Errorf("branch %q, want main", b)
		}
	})
}
