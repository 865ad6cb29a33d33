package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/cmdrule"
)

func ruleSet(t *testing.T, allow, deny []string) CommandRules {
	t.Helper()
	var s cmdrule.Set
	for _, p := range allow {
		r, err := cmdrule.Parse(cmdrule.Allow, p)
		if err != nil {
			t.Fatal(err)
		}
		s.Allow = append(s.Allow, r)
	}
	for _, p := range deny {
		r, err := cmdrule.Parse(cmdrule.Deny, p)
		if err != nil {
			t.Fatal(err)
		}
		s.Deny = append(s.Deny, r)
	}
	return func() (cmdrule.Set, error) { return s, nil }
}

func shellCall(cmd string) string {
	b, _ := json.Marshal(RunShellParams{Command: cmd})
	return string(b)
}

// Command rules decide run_shell calls inside the mode: deny refuses in
// every mode, allow runs where the mode would ask, read-only still
// refuses, and a line the deny rules could not be checked against never
// runs without a person's yes.
func TestGateCommandRules(t *testing.T) {
	ctx := context.Background()
	rules := ruleSet(t, []string{"go test ./...", "npm run lint *"}, []string{"rm *"})
	outcome := func(g *Gate, a *recordingApprover, cmd string) (string, Verdict) {
		before := len(a.reqs)
		v, err := g.Decide(ctx, nil, RunShell(), "c", shellCall(cmd))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(a.reqs) > before:
			return "asks", v
		case v.Allowed:
			return "runs", v
		default:
			return "refused", v
		}
	}
	cases := []struct {
		mode                         Mode
		sandboxed                    bool
		allowed, denied, other, junk string
	}{
		{ModeReadOnly, true, "refused", "refused", "refused", "refused"},
		{ModeAsk, true, "runs", "refused", "asks", "asks"},
		{ModeAutoEdit, true, "runs", "refused", "asks", "asks"},
		{ModeFullAuto, true, "runs", "refused", "runs", "refused"},
		{ModeAsk, false, "runs", "refused", "asks", "asks"},
		{ModeAutoEdit, false, "runs", "refused", "asks", "asks"},
	}
	for _, c := range cases {
		a := &recordingApprover{decision: Approve}
		g := NewGate(a)
		g.SetSandboxed(c.sandboxed)
		if err := g.SetMode(c.mode); err != nil {
			t.Fatal(err)
		}
		g.SetCommandRules(rules)
		var got [4]string
		var denied Verdict
		got[0], _ = outcome(g, a, "npm run lint -- --fix")
		got[1], denied = outcome(g, a, "go test ./... && rm -rf ~")
		got[2], _ = outcome(g, a, "ls")
		got[3], _ = outcome(g, a, "ls 'unclosed")
		if want := [4]string{c.allowed, c.denied, c.other, c.junk}; got != want {
			t.Errorf("%s (sandboxed %v): allowed/denied/other/unparsable = %v, want %v", c.mode, c.sandboxed, got, want)
		}
		if c.mode != ModeReadOnly && (!denied.Refusal.IsError || !strings.Contains(denied.Refusal.Content, `deny rule "rm *"`) || !strings.Contains(denied.Refusal.Content, `"rm -rf ~"`)) {
			t.Errorf("%s: the deny refusal does not say which rule and command: %q", c.mode, denied.Refusal.Content)
		}
	}
}

func TestGateCommandRulesAskWithProposalsAndNotes(t *testing.T) {
	ctx := context.Background()
	a := &recordingApprover{decision: Approve}
	g := NewGate(a)
	g.SetSandboxed(true)
	g.SetCommandRules(ruleSet(t, []string{"go vet *"}, []string{"rm *"}))
	if _, err := g.Decide(ctx, nil, RunShell(), "c", shellCall("go vet ./... && go test ./...")); err != nil {
		t.Fatal(err)
	}
	if len(a.reqs) != 1 || !slices.Equal(a.reqs[0].CommandRules, []string{"go test ./..."}) {
		t.Fatalf("requests %+v; want one proposing go test ./...", a.reqs)
	}
	g.Decide(ctx, nil, RunShell(), "c", shellCall("go test $(x)"))
	if r := a.reqs[1]; r.CommandRules != nil {
		t.Errorf("a computed command proposes %q", r.CommandRules)
	}
	g.Decide(ctx, nil, RunShell(), "c", shellCall("echo 'x"))
	if r := a.reqs[2]; !strings.Contains(r.Note, "could not be parsed") {
		t.Errorf("the note of an unparsable line: %q", r.Note)
	}
	// The tool-wide "always allow" does not cover a line the deny rules
	// could not be checked against.
	g.Decide(ctx, nil, RunShell(), "c", shellCall("echo ok"))
	a.decision = ApproveAlways
	g.Decide(ctx, nil, RunShell(), "c", shellCall("echo ok"))
	if g.Decide(ctx, nil, RunShell(), "c", shellCall("echo fine")); len(a.reqs) != 5 {
		t.Errorf("always allow did not cover a plain command: %d requests", len(a.reqs))
	}
	g.Decide(ctx, nil, RunShell(), "c", shellCall("echo 'x"))
	if len(a.reqs) != 6 {
		t.Errorf("always allow covered an unchecked command: %d requests", len(a.reqs))
	}
	// Other tools are not checked.
	if v, _ := g.Decide(ctx, &Env{Workspace: t.TempDir()}, WriteFile(), "c", `{"path":"rm","content":"rm -rf ~"}`); !v.Allowed {
		t.Errorf("write_file was refused: %+v", v)
	}
}

// The command checked is the command run: the tool's own strict decoder
// reads the arguments, duplicate keys and all.
func TestGateChecksTheCommandTheToolRuns(t *testing.T) {
	ctx := context.Background()
	a := &recordingApprover{decision: Deny}
	g := NewGate(a)
	g.SetCommandRules(ruleSet(t, []string{"go test ./..."}, nil))
	v, _ := g.Decide(ctx, nil, RunShell(), "c", `{"command":"go test ./...","command":"rm -rf ~"}`)
	if v.Allowed || len(a.reqs) != 1 {
		t.Errorf("a second command key slipped past the rule: %+v", v)
	}
	v, _ = g.Decide(ctx, nil, RunShell(), "c", `{"command":"go test ./...","extra":1}`)
	if v.Allowed {
		t.Errorf("arguments the tool refuses were allowed by a rule: %+v", v)
	}
}

func TestGateUnreadableRules(t *testing.T) {
	ctx := context.Background()
	broken := func() (cmdrule.Set, error) { return cmdrule.Set{}, errors.New("disk on fire") }
	a := &recordingApprover{decision: Approve}
	g := NewGate(a)
	g.SetSandboxed(true)
	g.SetCommandRules(broken)
	if v, _ := g.Decide(ctx, nil, RunShell(), "c", shellCall("ls")); !v.Allowed || len(a.reqs) != 1 || !strings.Contains(a.reqs[0].Note, "disk on fire") {
		t.Errorf("ask mode: %+v %+v", v, a.reqs)
	}
	g.SetMode(ModeFullAuto)
	if v, _ := g.Decide(ctx, nil, RunShell(), "c", shellCall("ls")); v.Allowed || !strings.Contains(v.Refusal.Content, "could not be read") {
		t.Errorf("full-auto ran a command with unreadable rules: %+v", v)
	}
	g.SetCommandRules(nil)
	if v, _ := g.Decide(ctx, nil, RunShell(), "c", shellCall("ls")); !v.Allowed {
		t.Errorf("without rules full-auto refused: %+v", v)
	}
}

// TestAnAllowRuleForGitRunsNoProgramTheRepositoryNames is the regression
// test for a repository's .git/config fsmonitor (and hooks) running under
// the allow rule `git status`, which no person saw: a command an allow
// rule lets through gets git's own hardening, the one Tally's git uses.
func TestAnAllowRuleForGitRunsNoProgramTheRepositoryNames(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	ws, env := newWorkspace(t, nil)
	marker := filepath.Join(ws, "fsmonitor-ran")
	mon := filepath.Join(ws, ".git", "mon.sh")
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", mon}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.WriteFile(mon, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x"), 0o644)

	g := NewGate(DenyAll{})
	g.SetCommandRules(ruleSet(t, []string{"git status"}, nil))
	v, err := g.Decide(ctx, env, RunShell(), "c", shellCall("git status"))
	if err != nil || !v.Allowed {
		t.Fatalf("the rule did not allow git status: %+v, %v", v, err)
	}
	if res := RunShell().Run(v.Ctx, env, json.RawMessage(shellCall("git status"))); res.IsError {
		t.Fatalf("git status under the rule: %s", res.Content)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the repository's fsmonitor ran under the allow rule")
	}
	// The same command approved by a person runs as git would.
	RunShell().Run(ctx, env, json.RawMessage(shellCall("git status")))
	if _, err := os.Stat(marker); err != nil {
		t.Skipf("this git runs no fsmonitor script (%v), so the check above proves nothing here", err)
	}
}
