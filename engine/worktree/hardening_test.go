package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant writes an executable script at path that leaves marker behind
// when it runs.
func plant(t *testing.T, path, marker string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho ran >> "+marker+"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestWorktreeGitRunsNoProgramTheAgentPlanted is the regression test for
// worktree git running the agent's code as the user: a sandboxed command
// replaced the worktree's .git with a repository of its own whose config
// names an fsmonitor and whose hooks include post-commit, and the
// repository's config and hooks were changed too (as a session working in
// it can). Reviewing the diff and merging must run none of them and still
// work on the real worktree.
func TestWorktreeGitRunsNoProgramTheAgentPlanted(t *testing.T) {
	ctx := context.Background()
	main := repo(t)
	tree, err := Create(ctx, main, t.TempDir(), "evil")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")

	// The agent's repository in place of the worktree's .git file.
	fake := t.TempDir()
	run(t, fake, "init", "-q")
	plant(t, filepath.Join(fake, ".git", "fsmonitor.sh"), marker)
	plant(t, filepath.Join(fake, ".git", "hooks", "post-commit"), marker)
	plant(t, filepath.Join(fake, ".git", "hooks", "pre-commit"), marker)
	run(t, fake, "config", "core.fsmonitor", filepath.Join(fake, ".git", "fsmonitor.sh"))
	os.Remove(filepath.Join(tree.Path, ".git"))
	if err := os.Rename(filepath.Join(fake, ".git"), filepath.Join(tree.Path, ".git")); err != nil {
		t.Fatal(err)
	}
	// And the repository's own config and hooks.
	plant(t, filepath.Join(main, ".git", "mon.sh"), marker)
	run(t, main, "config", "core.fsmonitor", filepath.Join(main, ".git", "mon.sh"))
	for _, h := range []string{"post-commit", "post-merge", "pre-merge-commit", "reference-transaction"} {
		plant(t, filepath.Join(main, ".git", "hooks", h), marker)
	}

	os.WriteFile(filepath.Join(tree.Path, "calc.go"), []byte("package calc\n\nfunc Sum(a, b int) int { return a + b }\n"), 0o644)
	d, err := tree.Diff(ctx)
	if err != nil || !strings.Contains(d, "return a + b") {
		t.Fatalf("diff of the real worktree = %q, %v", d, err)
	}
	if err := tree.Merge(ctx, "Tally session evil"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(main, "calc.go")); !strings.Contains(string(data), "a + b") {
		t.Fatal("the merge did not reach the main checkout")
	}
	if ran, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a planted program ran %d time(s) under Tally's git", strings.Count(string(ran), "ran"))
	}
}

// TestWorktreeGitIgnoresTheUsersGitEnvironment checks that GIT_DIR and
// friends in Tally's own environment cannot point its git elsewhere.
func TestWorktreeGitIgnoresTheUsersGitEnvironment(t *testing.T) {
	ctx := context.Background()
	main := repo(t)
	tree, err := Create(ctx, main, t.TempDir(), "env")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "nowhere"))
	t.Setenv("GIT_WORK_TREE", t.TempDir())
	os.WriteFile(filepath.Join(tree.Path, "x.go"), []byte("package calc\n"), 0o644)
	if d, err := tree.Diff(ctx); err != nil || !strings.Contains(d, "x.go") {
		t.Fatalf("diff = %q, %v", d, err)
	}
}
