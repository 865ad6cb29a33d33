package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte("package calc\n\nfunc Sum(a, b int) int { return a - b }\n"), 0o644)
	run(t, dir, "add", ".")
	run(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func TestWorktreeIsolatesDiffsMergesAndRemoves(t *testing.T) {
	ctx := context.Background()
	main := repo(t)
	root := t.TempDir()
	a, err := Create(ctx, main, root, "s1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(ctx, filepath.Join(main, "."), root, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if a.Branch != "tally/s1" || a.Path == b.Path || !strings.HasPrefix(a.Path, root) {
		t.Fatalf("trees %+v %+v", a, b)
	}
	// Each session edits its own copy.
	os.WriteFile(filepath.Join(a.Path, "calc.go"), []byte("package calc\n\nfunc Sum(a, b int) int { return a + b }\n"), 0o644)
	os.WriteFile(filepath.Join(a.Path, "new.go"), []byte("package calc\n"), 0o644)
	if data, _ := os.ReadFile(filepath.Join(b.Path, "calc.go")); strings.Contains(string(data), "a + b") {
		t.Fatal("one session's edit reached the other's worktree")
	}
	d, err := a.Diff(ctx)
	if err != nil || !strings.Contains(d, "+func Sum(a, b int) int { return a + b }") || !strings.Contains(d, "new.go") {
		t.Fatalf("diff %q, %v", d, err)
	}
	if d, err := b.Diff(ctx); err != nil || d != "" {
		t.Fatalf("the untouched worktree's diff %q, %v", d, err)
	}
	if err := b.Merge(ctx, "Tally session s2"); err == nil || !strings.Contains(err.Error(), "changed nothing") {
		t.Fatalf("merging nothing: %v", err)
	}
	if err := a.Merge(ctx, "Tally session s1"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(main, "calc.go")); !strings.Contains(string(data), "a + b") {
		t.Fatal("the merge did not reach the main checkout")
	}
	if err := a.Remove(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Path); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if strings.Contains(run(t, main, "branch"), "tally/s1") {
		t.Fatal("the branch is still there")
	}
	if _, err := Create(ctx, t.TempDir(), root, "s3"); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("a plain folder: %v", err)
	}
}

func TestMergeConflictLeavesTheCheckoutClean(t *testing.T) {
	ctx := context.Background()
	main := repo(t)
	a, err := Create(ctx, main, t.TempDir(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.Path, "calc.go"), []byte("package calc // session\n"), 0o644)
	os.WriteFile(filepath.Join(main, "calc.go"), []byte("package calc // user\n"), 0o644)
	run(t, main, "commit", "-qam", "user's change")
	if err := a.Merge(ctx, "Tally session c1"); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("conflict: %v", err)
	}
	if st := run(t, main, "status", "--porcelain"); st != "" {
		t.Fatalf("the checkout was left half-merged: %q", st)
	}
}
