package cli

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// --allow-command runs a matching command without asking, even with no
// terminal to ask on; --deny-command refuses one without asking and the
// model is told why; both hold for that run only.
func TestRunAllowAndDenyCommand(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("run_shell", `{"command":"touch ran.txt"}`),
		llmtest.Call("run_shell", `{"command":"touch x.txt && rm -rf keep"}`),
		llmtest.Text("done"),
		llmtest.Call("run_shell", `{"command":"touch again.txt"}`),
		llmtest.Text("done again"),
	))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), workspace(t)
	if err := os.Mkdir(filepath.Join(ws, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", ws, "--session", "rules"}
	_, errOut, code := runCLI(t, append(base, "--allow-command", "touch ran.txt", "--allow-command", "touch again.txt", "--allow-command", "touch x.txt", "--deny-command", "rm *", "go")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "keep")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Error("part of the denied line ran")
	}
	if !strings.Contains(errOut, `deny rule "rm *"`) || strings.Contains(errOut, "not a terminal") {
		t.Errorf("stderr should show the refusal and no approval notice:\n%s", errOut)
	}

	// The next run of the session, without the flags, asks again (and
	// with no terminal, is denied).
	_, errOut, code = runCLI(t, append(base, "again")...)
	if code != ExitDenied {
		t.Fatalf("exit %d, want %d (denied): %s", code, ExitDenied, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "again.txt")); err == nil || !strings.Contains(errOut, "not a terminal") {
		t.Errorf("a rule of the last run still applied: %v\n%s", err, errOut)
	}
}

func TestRunRefusesBadCommandPatterns(t *testing.T) {
	for _, tc := range []struct{ flag, pattern, want string }{
		{"--allow-command", "go test; rm -rf ~", "more than one command"},
		{"--allow-command", "go test $(curl x)", "would expand"},
		{"--allow-command", "*", "every command"},
		{"--deny-command", "", "empty"},
	} {
		_, errOut, code := runCLI(t, "run", "--data", t.TempDir(), tc.flag, tc.pattern, "hello")
		if code != ExitUsage || !strings.Contains(errOut, tc.flag) || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%s %q: exit %d, stderr %q", tc.flag, tc.pattern, code, errOut)
		}
	}
}

// On a terminal, [c] adds the proposed command rules for the workspace
// and approves the call; a request with nothing to propose offers no [c].
func TestTerminalApproverAddsCommandRules(t *testing.T) {
	var added []string
	var out strings.Builder
	ta := &terminalApprover{in: bufio.NewReader(strings.NewReader("c\nc\n")), out: &out,
		allowCommand: func(p string) error { added = append(added, p); return nil }}
	req := tool.ApprovalRequest{Tool: "run_shell", Display: "go test ./... && go vet ./...", CommandRules: []string{"go test ./...", "go vet ./..."}}
	d, err := ta.Approve(context.Background(), req)
	if err != nil || d != tool.Approve || strings.Join(added, "|") != "go test ./...|go vet ./..." {
		t.Errorf("[c] = %v, %v; added %q", d, err, added)
	}
	if !strings.Contains(out.String(), "[c]ommand rule") || !strings.Contains(out.String(), "go test ./... · go vet ./...") {
		t.Errorf("the card does not offer the rules:\n%s", out.String())
	}
	out.Reset()
	req.CommandRules = nil
	if d, _ := ta.Approve(context.Background(), req); d != tool.Deny || strings.Contains(out.String(), "[c]") || len(added) != 2 {
		t.Errorf("[c] without proposals = %v, added %q:\n%s", d, added, out.String())
	}
}
