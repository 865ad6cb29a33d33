package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// shellResults returns the tool results of msgs, in order.
func shellResults(msgs []transcript.Message) []transcript.Message {
	var out []transcript.Message
	for _, m := range msgs {
		if m.Role == transcript.Tool {
			out = append(out, m)
		}
	}
	return out
}

// A workspace's allow rule runs a command without asking, and its deny
// rule hands the refusal to the model without asking; the rules are the
// workspace's, seen by its other sessions.
func TestCommandRulesInATurn(t *testing.T) {
	script := llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run_shell", Arguments: `{"command":"echo allowed-ran"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run_shell", Arguments: `{"command":"echo x && rm -rf keep"}`}}},
		llmtest.Text("done"),
	)
	ap := &scriptedApprover{answers: []tool.Decision{tool.Approve}}
	h := newHarness(t, script, ap)
	if err := os.Mkdir(filepath.Join(h.ws, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := h.session("s")
	perms := s.Permissions()
	if err := perms.AllowCommand("echo *"); err != nil {
		t.Fatal(err)
	}
	if err := perms.DenyCommand("rm *"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "run them"); err != nil {
		t.Fatal(err)
	}
	if ap.asked != 0 {
		t.Errorf("the approver was asked %d times; the rules decide both calls", ap.asked)
	}
	res := shellResults(s.Snapshot().Messages())
	if len(res) != 2 {
		t.Fatalf("%d tool results; want 2", len(res))
	}
	if res[0].IsError || !strings.Contains(res[0].Text(), "allowed-ran") {
		t.Errorf("the allowed command's result: %q", res[0].Text())
	}
	if !res[1].IsError || !strings.Contains(res[1].Text(), `deny rule "rm *"`) {
		t.Errorf("the denied command's result: %q", res[1].Text())
	}
	if _, err := os.Stat(filepath.Join(h.ws, "keep")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	h.noInvalid()

	other := h.session("other")
	got, err := other.Permissions().CommandRules()
	if err != nil {
		t.Fatal(err)
	}
	want := []cmdrule.InForce{{Pattern: "rm *", Deny: true}, {Pattern: "echo *"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("another session of the workspace lists %+v; want %+v", got, want)
	}
}

func TestCommandRulesManagement(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("hi")), nil)
	h.cfg.AllowCommands = []string{"go test ./..."}
	h.cfg.DenyCommands = []string{"git push --force *"}
	s := h.session("s")
	p := s.Permissions()
	list := func() []cmdrule.InForce {
		t.Helper()
		l, err := p.CommandRules()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := list(); len(l) != 2 || !l[0].ThisRun || !l[0].Deny || l[1].Pattern != "go test ./..." || !l[1].ThisRun {
		t.Errorf("the session's own rules: %+v", l)
	}
	// The session's own rules are not the workspace's.
	h.cfg.AllowCommands, h.cfg.DenyCommands = nil, nil
	if l, _ := h.session("s2").Permissions().CommandRules(); len(l) != 0 {
		t.Errorf("a session without its own rules lists %+v", l)
	}

	for _, bad := range []string{"go test; rm -rf ~", "go test $(curl x)", "*", "bash -c 'go test'", ""} {
		err := p.AllowCommand(bad)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("AllowCommand(%q) = %v; want a one-sentence refusal", bad, err)
		}
	}
	if err := p.AllowCommand("npm run lint:*"); err != nil {
		t.Fatal(err)
	}
	// Allowing what is denied, or the reverse, replaces the rule.
	if err := p.DenyCommand("npm run lint *"); err != nil {
		t.Fatal(err)
	}
	if err := p.AllowCommand("npm run lint *"); err != nil {
		t.Fatal(err)
	}
	if err := p.AllowCommand("npm run lint *"); err != nil {
		t.Fatal(err)
	}
	l := list()
	if len(l) != 3 || l[0].Pattern != "npm run lint *" || l[0].Deny || l[0].ThisRun {
		t.Errorf("after allow, deny, allow twice: %+v", l)
	}

	if err := p.RevokeCommand("npm run lint:*"); err != nil {
		t.Errorf("RevokeCommand in the Claude form: %v", err)
	}
	if err := p.RevokeCommand("go  test ./..."); err != nil {
		t.Errorf("RevokeCommand of the session's own rule: %v", err)
	}
	if err := p.RevokeCommand("npm run lint *"); err == nil {
		t.Error("revoking a rule twice is not an error")
	}
	if l := list(); len(l) != 1 || l[0].Pattern != "git push --force *" {
		t.Errorf("after revoking: %+v", l)
	}

	// A session whose own rule is invalid does not open.
	h.cfg.AllowCommands = []string{"go test $(x)"}
	if _, err := Create(h.cfg, "bad", h.ws, ""); err == nil || !strings.Contains(err.Error(), "would expand") {
		t.Errorf("Create with an invalid rule = %v", err)
	}
}
