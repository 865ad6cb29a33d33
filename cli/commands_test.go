package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// `tally run "/NAME args"` sends the text of the user's or the
// workspace's command file; the built-in commands run without sending
// anything, or say where they belong.
func TestRunExpandsCommandFilesAndRunsBuiltins(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("OPENAI_API_KEY", "")
	writeCommandFile(t, filepath.Join(cfg, "tally", "commands", "review.md"),
		"---\ndescription: Review a change.\nargument-hint: [pr] [focus]\n---\nReview pull request $1 (asked: $ARGUMENTS).\n")
	ws := t.TempDir()
	writeCommandFile(t, filepath.Join(ws, ".claude", "commands", "fix.md"), "Fix the failing test.\n")
	writeCommandFile(t, filepath.Join(ws, ".tally", "commands", "broken.md"), "---\ndescription: [unclosed\n")
	var mu sync.Mutex
	var sent []string
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		mu.Lock()
		sent = append(sent, req.LastHuman())
		mu.Unlock()
		return llmtest.Text("Done: the brief.")
	}))
	t.Cleanup(srv.Close)
	data := t.TempDir()
	run := func(args ...string) (string, string, int) {
		return runCLI(t, append([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "test-model", "--workspace", ws}, args...)...)
	}
	requests := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(sent)
	}

	_, errOut, code := run(`/review 42 "error paths"`)
	if code != ExitOK || requests() != 1 || !strings.Contains(sent[0], `Review pull request 42 (asked: 42 "error paths").`) {
		t.Fatalf("/review: exit %d, %q; the model got %q", code, errOut, sent)
	}
	id := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(errOut, "\n", 2)[0], "session "))
	if _, errOut, code := run("--session", id, "/fix the parser"); code != ExitOK || requests() != 2 || !strings.Contains(sent[1], "Fix the failing test.\n\nthe parser") {
		t.Fatalf("/fix: exit %d, %q; the model got %q", code, errOut, sent)
	}
	if _, errOut, code := run("/broken"); code != ExitFail || !strings.Contains(errOut, "the command /broken (.tally/commands/broken.md) cannot be used: its header") {
		t.Errorf("/broken: exit %d, %q", code, errOut)
	}

	out, errOut, code := run("/help")
	for _, want := range []string{"  /compact — Compact the conversation now", "  /review [pr] [focus] — Review a change. (", "  /fix — Fix the failing test. (.claude/commands/fix.md)", "tally mcp list --probe"} {
		if !strings.Contains(out, want) {
			t.Errorf("/help lacks %q:\n%s", want, out)
		}
	}
	if code != ExitOK || !strings.Contains(out, "  /broken — cannot be used: its header") {
		t.Errorf("/help: exit %d, stderr %q", code, errOut)
	}
	if out, _, code := run("/model"); code != ExitOK || !strings.Contains(out, "tally run talks to test-model; choose another with --model NAME or --profile NAME") {
		t.Errorf("/model: exit %d, %q", code, out)
	}
	for prompt, want := range map[string]string{
		"/compact":       "/compact acts on a stored session; name it with --session ID",
		"/rewind 2":      "on the command line run tally rewind SESSION --to 2",
		"/model other":   "/model switches a stored session; name it with --session ID",
		"/compact again": "/compact takes no arguments",
	} {
		if _, errOut, code := run(prompt); code != ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, %q; want %q", prompt, code, errOut, want)
		}
	}
	if n := requests(); n != 2 {
		t.Fatalf("%d requests after the built-in commands; want none of theirs", n)
	}

	out, errOut, code = run("--session", id, "/new-cycle")
	if code != ExitOK || !strings.Contains(out, "session "+id+": cycle 2 started from the hand-off brief") {
		t.Errorf("/new-cycle: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code = run("--session", id, "/compact"); code == ExitUsage || strings.Contains(errOut, "not a message") {
		t.Errorf("/compact: exit %d, %q %q", code, out, errOut)
	}
}

func writeCommandFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
