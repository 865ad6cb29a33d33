package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CurrentBranch reads a checkout's branch from its HEAD: a plain
// checkout, a linked worktree's .git file, a detached HEAD, and a folder
// that is no checkout.
func TestCurrentBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(repo, "init", "-q", "-b", "feature/x")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	git(repo, "add", "a.txt")
	git(repo, "commit", "-q", "-m", "a")
	if got := CurrentBranch(repo); got != "feature/x" {
		t.Errorf("a checkout on feature/x: %q", got)
	}
	linked := filepath.Join(t.TempDir(), "wt")
	git(repo, "worktree", "add", "-q", "-b", "tally/s1", linked)
	if got := CurrentBranch(linked); got != "tally/s1" {
		t.Errorf("a linked worktree on tally/s1: %q", got)
	}
	git(repo, "checkout", "-q", "--detach")
	if got := CurrentBranch(repo); len(got) != 12 {
		t.Errorf("a detached HEAD: %q; want the commit's first 12 digits", got)
	}
	if got := CurrentBranch(t.TempDir()); got != "" {
		t.Errorf("a folder that is no checkout: %q", got)
	}
}
