package status

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// GitBranch reads a checkout's branch from its HEAD: a plain checkout, a
// linked worktree's .git file, a detached HEAD, and a folder that is no
// checkout.
func TestGitBranchOfCheckoutsAndWorktrees(t *testing.T) {
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
	if got := GitBranch(repo); got != "feature/x" {
		t.Errorf("a checkout on feature/x: %q", got)
	}
	linked := filepath.Join(t.TempDir(), "wt")
	git(repo, "worktree", "add", "-q", "-b", "tally/s1", linked)
	if got := GitBranch(linked); got != "tally/s1" {
		t.Errorf("a linked worktree on tally/s1: %q", got)
	}
	git(repo, "checkout", "-q", "--detach")
	if got := GitBranch(repo); len(got) != len("detached@")+7 || got[:9] != "detached@" {
		t.Errorf("a detached HEAD: %q; want detached@ and the commit's first 7 digits", got)
	}
	if got := GitBranch(t.TempDir()); got != "" {
		t.Errorf("a folder that is no checkout: %q", got)
	}
}
