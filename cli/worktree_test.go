package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// `tally run --worktree` works in a git worktree of its own; `tally
// worktree diff|merge|remove` show, merge and drop what it did.
func TestRunInAWorktreeThenDiffMergeRemove(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("old line\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "first")
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("edit_file", `{"path":"notes.txt","old_string":"old line","new_string":"new line"}`),
		llmtest.Text("edited"),
	))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data := t.TempDir()
	_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", repo, "--worktree", "--yes", "edit the notes")
	if code != ExitOK {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	m := regexp.MustCompile(`session (\S+)`).FindStringSubmatch(errOut)
	if m == nil || !strings.Contains(errOut, "on branch tally/"+m[1]) {
		t.Fatalf("run said %q", errOut)
	}
	id := m[1]
	if _, errOut, code := runCLI(t, "run", "--data", data, "--session", id, "--worktree", "again"); code != ExitUsage || !strings.Contains(errOut, "leave out --session") {
		t.Errorf("--worktree with --session: exit %d, %q", code, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(data) != "old line\n" {
		t.Fatalf("the run edited the repository's checkout: %q", data)
	}
	out, errOut, code := runCLI(t, "worktree", "diff", "--data", data, id)
	if code != ExitOK || !strings.Contains(out, "-old line") || !strings.Contains(out, "+new line") {
		t.Fatalf("diff: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "worktree", "merge", "--data", data, id); code != ExitOK || !strings.Contains(out, "merged tally/"+id) {
		t.Fatalf("merge: exit %d, %q %q", code, out, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(data) != "new line\n" {
		t.Fatalf("after the merge the checkout holds %q", data)
	}
	if out, errOut, code := runCLI(t, "worktree", "remove", "--data", data, id, "--branch"); code != ExitOK || !strings.Contains(out, "removed the worktree") {
		t.Fatalf("remove: exit %d, %q %q", code, out, errOut)
	}
	if strings.Contains(git("branch"), "tally/") {
		t.Fatal("the session's branch is still there")
	}
	if _, errOut, code := runCLI(t, "worktree", "diff", "--data", data, id); code == ExitOK || !strings.Contains(errOut, "not in a worktree") {
		t.Fatalf("diff after remove: exit %d, %q", code, errOut)
	}
}

// `tally worktree` without a subcommand prints its usage line by line,
// as the help lays it out.
func TestWorktreeUsageIsMultiLine(t *testing.T) {
	for _, args := range [][]string{{"worktree"}, {"worktree", "nope"}} {
		_, errOut, code := runCLI(t, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != ExitUsage || len(lines) != 5 || !strings.HasPrefix(lines[0], "tally worktree: ") || lines[1] != "usage:" ||
			!strings.HasPrefix(lines[2], "  tally worktree diff SESSION ") || !strings.HasPrefix(lines[4], "  tally worktree remove SESSION [--branch] ") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}
