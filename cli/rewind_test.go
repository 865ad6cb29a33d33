package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// undoScript edits calc/calc.go and creates a file in turn "one", and
// removes README.md with rm in turn "two".
func undoScript() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("Done.")
		}
		switch {
		case strings.Contains(req.LastHuman(), "one"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "edit_file", Arguments: `{"path":"calc/calc.go","old_string":"return a - b","new_string":"return a + b"}`},
				{Name: "write_file", Arguments: `{"path":"NOTES.md","content":"fixed Add\n"}`},
			}}
		case strings.Contains(req.LastHuman(), "two"):
			return llmtest.Call("run_shell", `{"command":"rm README.md"}`)
		}
		return llmtest.Text("Hello.")
	})
}

func TestChangesAndRewindCommands(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	calc, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go"))
	common := []string{"--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat"}
	for _, text := range []string{"turn one", "turn two"} {
		if _, errOut, code := runCLI(t, append(append([]string{"run"}, common...), "--session", "u", "--workspace", ws, "--yes", text)...); code != 0 {
			t.Fatalf("run %q exited %d: %s", text, code, errOut)
		}
	}

	out, errOut, code := runCLI(t, "changes", "--data", data, "u")
	if code != 0 {
		t.Fatalf("changes exited %d: %s", code, errOut)
	}
	mustHave(t, out, "3 file(s) changed since the session started", "--- a/calc/calc.go", "-func Add(a, b int) int { return a - b }", "+func Add(a, b int) int { return a + b }",
		"--- /dev/null\n+++ b/NOTES.md", "--- a/README.md\n+++ /dev/null")
	out, _, _ = runCLI(t, "changes", "--data", data, "u", "--turn", "2")
	mustHave(t, out, "1 file(s) changed since the start of turn 2", "README.md")

	// The user edits the new file after the agent: a rewind refuses it.
	os.WriteFile(filepath.Join(ws, "NOTES.md"), []byte("my notes\n"), 0o644)
	out, errOut, code = runCLI(t, "rewind", "--data", data, "u", "--to", "1")
	if code != 0 {
		t.Fatalf("dry run exited %d: %s", code, errOut)
	}
	mustHave(t, out, "Rewind to the start of turn 1", "restore        calc/calc.go", "remove         NOTES.md", "recreate       README.md",
		"CONFLICT", "Conflict in NOTES.md:", "+my notes", "would be superseded", "[user] turn two", "Dry run: nothing was changed")
	if b, _ := os.ReadFile(filepath.Join(ws, "NOTES.md")); string(b) != "my notes\n" {
		t.Fatal("the dry run changed a file")
	}
	// --yes over a conflict shows the outside change to review, not the
	// whole dry run, and then says what to do.
	out, errOut, code = runCLI(t, "rewind", "--data", data, "u", "--to", "1", "--yes")
	if code != ExitFail || !strings.Contains(errOut, "NOTES.md changed outside Tally") || !strings.Contains(errOut, "add --force") {
		t.Fatalf("rewind over a conflict exited %d: %s", code, errOut)
	}
	mustHave(t, out, "Conflict in NOTES.md:", "+my notes")
	if strings.Contains(out, "What restoring does") || strings.Contains(out, "+# calc") {
		t.Errorf("rewind --yes printed the whole dry run before it refused:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "NOTES.md")); string(b) != "my notes\n" {
		t.Fatal("the user's edit was overwritten without --force")
	}
	out, errOut, code = runCLI(t, "rewind", "--data", data, "u", "--to", "1", "--yes", "--force")
	if code != 0 {
		t.Fatalf("rewind --force exited %d: %s", code, errOut)
	}
	mustHave(t, out, "Rewound to the start of turn 1", "Restored 3 file(s).", "  calc/calc.go", "  NOTES.md", "  README.md", "The rewound message was:\nturn one")
	if strings.Contains(out, "What restoring does") || strings.Contains(out, "would be superseded") {
		t.Errorf("rewind --yes printed the dry run:\n%s", out)
	}
	// The conversation was rewound already: --yes says so before it
	// prints anything, in a plain sentence.
	out, errOut, code = runCLI(t, "rewind", "--data", data, "u", "--to", "1", "--yes")
	if code != ExitFail || out != "" || !strings.HasPrefix(errOut, "tally rewind: the conversation cannot be rewound, so nothing was changed: turn 1 was already taken out") || !strings.Contains(errOut, "--files-only") {
		t.Errorf("rewind --yes to a rewound turn: exit %d, out %q, stderr %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go")); string(b) != string(calc) {
		t.Error("calc/calc.go was not restored byte for byte")
	}
	if _, err := os.Stat(filepath.Join(ws, "NOTES.md")); !os.IsNotExist(err) {
		t.Error("NOTES.md, created by the agent, is still there")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "README.md")); string(b) != "# calc\n" {
		t.Errorf("README.md holds %q", b)
	}
	out, _, _ = runCLI(t, "changes", "--data", data, "u")
	mustHave(t, out, "No files changed")

	// The next turn is valid for the strict server; the export keeps the
	// superseded messages.
	if _, errOut, code := runCLI(t, append(append([]string{"run"}, common...), "--session", "u", "--workspace", ws, "--yes", "hello")...); code != 0 {
		t.Fatalf("run after the rewind exited %d: %s", code, errOut)
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("server rejected a request: %s", bad[0].Error)
	}
	out, _, _ = runCLI(t, "export", "--data", data, "u")
	mustHave(t, out, "turn two", `"superseded_by":"rewind to turn 1"`)

	_, errOut, code = runCLI(t, "rewind", "--data", data, "u")
	if code != ExitUsage || !strings.Contains(errOut, "--to") {
		t.Errorf("rewind without --to exited %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, "rewind", "--data", data, "u", "--to", "1", "--files-only", "--chat-only")
	if code != ExitUsage {
		t.Errorf("--files-only with --chat-only exited %d: %s", code, errOut)
	}
	out, _, _ = runCLI(t, "help")
	mustHave(t, out, "tally changes SESSION", "tally rewind SESSION --to N")
}

func mustHave(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}
