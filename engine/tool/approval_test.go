package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

func TestGateModes(t *testing.T) {
	ctx := context.Background()
	env := &Env{Workspace: t.TempDir()}
	shell, edit, read := RunShell(), EditFile(), ReadFile()
	shellArgs, editArgs, readArgs := `{"command":"ls"}`, `{"path":"a.go","old_string":"a","new_string":"b"}`, `{"path":"a.go"}`
	// outcome is what happens to one call: "runs", "asks" or "refused".
	outcome := func(g *Gate, a *recordingApprover, tl Tool, args string) string {
		before := len(a.reqs)
		v, err := g.Decide(ctx, env, tl, "c", args)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(a.reqs) > before:
			return "asks"
		case v.Allowed:
			return "runs"
		default:
			if !v.Refusal.IsError || v.Refusal.Content == "" {
				t.Errorf("a refusal without a message: %+v", v.Refusal)
			}
			return "refused"
		}
	}
	cases := []struct {
		mode                  Mode
		sandboxed             bool
		read, edit, shellWant string
	}{
		{ModeReadOnly, true, "runs", "refused", "refused"},
		{ModeAsk, true, "runs", "asks", "asks"},
		{ModeAutoEdit, true, "runs", "runs", "asks"},
		{ModeFullAuto, true, "runs", "runs", "runs"},
		{ModeAsk, false, "runs", "asks", "asks"},
		{ModeAutoEdit, false, "runs", "runs", "asks"},
	}
	for _, c := range cases {
		a := &recordingApprover{decision: Approve}
		g := NewGate(a)
		g.SetSandboxed(c.sandboxed)
		if err := g.SetMode(c.mode); err != nil {
			t.Fatalf("SetMode(%s): %v", c.mode, err)
		}
		got := [3]string{outcome(g, a, read, readArgs), outcome(g, a, edit, editArgs), outcome(g, a, shell, shellArgs)}
		want := [3]string{c.read, c.edit, c.shellWant}
		if got != want {
			t.Errorf("%s (sandboxed %v): read/edit/shell = %v, want %v", c.mode, c.sandboxed, got, want)
		}
	}
	t.Run("full auto is refused without a sandbox", func(t *testing.T) {
		g := NewGate(ApproveAll{})
		if err := g.SetMode(ModeFullAuto); err == nil || g.Mode() != ModeAsk {
			t.Errorf("SetMode(full-auto) without a sandbox = %v, mode %s", err, g.Mode())
		}
	})
	t.Run("read-only refusal says what to do", func(t *testing.T) {
		g := NewGate(ApproveAll{})
		g.SetMode(ModeReadOnly)
		v, _ := g.Decide(ctx, env, shell, "c", shellArgs)
		if v.Allowed || !strings.Contains(v.Refusal.Content, "read-only mode") {
			t.Errorf("got %+v", v)
		}
	})
}

func TestGateRules(t *testing.T) {
	ctx := context.Background()
	env := &Env{Workspace: t.TempDir()}
	args := `{"command":"ls"}`
	t.Run("always is a visible, revocable rule", func(t *testing.T) {
		a := &recordingApprover{decision: ApproveAlways}
		g := NewGate(a)
		g.SetSandboxed(true)
		g.Decide(ctx, env, RunShell(), "1", args)
		g.Decide(ctx, env, RunShell(), "2", args)
		if len(a.reqs) != 1 || strings.Join(g.Rules(), ",") != "run_shell" {
			t.Fatalf("asked %d times, rules %v; want once and [run_shell]", len(a.reqs), g.Rules())
		}
		g.Revoke("run_shell")
		g.Decide(ctx, env, RunShell(), "3", args)
		if len(a.reqs) != 2 || len(g.Rules()) != 1 {
			t.Errorf("after Revoke: asked %d times, rules %v; want a new question", len(a.reqs), g.Rules())
		}
	})
	t.Run("an unsandboxed command asks every time", func(t *testing.T) {
		a := &recordingApprover{decision: ApproveAlways}
		g := NewGate(a)
		for i := range 3 {
			v, _ := g.Decide(ctx, env, RunShell(), "c", args)
			if !v.Allowed {
				t.Fatalf("call %d denied", i)
			}
		}
		if len(a.reqs) != 3 || len(g.Rules()) != 0 || !a.reqs[0].NoAlways || !strings.Contains(a.reqs[0].Note, "not sandboxed") {
			t.Errorf("asked %d times, rules %v, request %+v", len(a.reqs), g.Rules(), a.reqs[0])
		}
	})
	t.Run("an external tool may be always allowed without a sandbox, and auto-edit still asks", func(t *testing.T) {
		a := &recordingApprover{decision: ApproveAlways}
		g := NewGate(a)
		g.SetMode(ModeAutoEdit)
		ext := externalTool{fakeTool{name: "mcp__srv__do", gated: true}}
		for range 2 {
			if v, _ := g.Decide(ctx, env, ext, "x", `{}`); !v.Allowed {
				t.Fatal("the approved external call was refused")
			}
		}
		if len(a.reqs) != 1 || a.reqs[0].NoAlways || strings.Join(g.Rules(), ",") != "mcp__srv__do" {
			t.Errorf("asked %d times, rules %v, request %+v; want one question and an always rule", len(a.reqs), g.Rules(), a.reqs)
		}
	})
	t.Run("deny and no approver refuse", func(t *testing.T) {
		for _, a := range []Approver{DenyAll{}, nil, &recordingApprover{decision: Decision(99)}} {
			if v, _ := NewGate(a).Decide(ctx, env, RunShell(), "1", args); v.Allowed || !strings.HasPrefix(v.Refusal.Content, "denied") {
				t.Errorf("%T: %+v", a, v)
			}
		}
	})
	t.Run("approver error", func(t *testing.T) {
		a := &recordingApprover{decision: Approve, err: context.Canceled}
		ok, err := NewGate(a).Allow(ctx, RunShell(), "1", args)
		if ok || !errors.Is(err, context.Canceled) {
			t.Errorf("ok=%v err=%v", ok, err)
		}
	})
	t.Run("decision names", func(t *testing.T) {
		if Deny.String() != "deny" || Approve.String() != "approve" || ApproveAlways.String() != "approve always" {
			t.Error("unexpected names")
		}
	})
}

// A command padded with spaces used to be shown cut at 200 characters,
// hiding "; touch SPOOFED"; the approval now carries the whole command
// with the padding made visible, and what cannot be shown is refused.
func TestApprovalShowsTheWholeCall(t *testing.T) {
	ctx := context.Background()
	env := &Env{Workspace: t.TempDir()}
	cmd := "echo harmless" + strings.Repeat(" ", 250) + "; touch SPOOFED\x1b[2K\u202e"
	args, _ := json.Marshal(map[string]string{"command": cmd})
	a := &recordingApprover{decision: Deny}
	NewGate(a).Decide(ctx, env, RunShell(), "c", string(args))
	if len(a.reqs) != 1 {
		t.Fatal("not asked")
	}
	d := a.reqs[0].Display
	for _, want := range []string{"echo harmless⟨250 spaces⟩; touch SPOOFED", `\u001b[2K`, `\u202e`} {
		if !strings.Contains(d, want) {
			t.Errorf("display lacks %q:\n%s", want, d)
		}
	}
	for _, l := range strings.Split(d, "\n") {
		if n := len([]rune(l)); n > DisplayWidth+2 {
			t.Errorf("display line of %d runes is not wrapped: %q", n, l)
		}
	}
	long, _ := json.Marshal(map[string]string{"command": strings.Repeat("x", DisplayLimit+1)})
	a = &recordingApprover{decision: Approve}
	v, _ := NewGate(a).Decide(ctx, env, RunShell(), "c", string(long))
	if v.Allowed || len(a.reqs) != 0 || !strings.Contains(v.Refusal.Content, "too long") {
		t.Errorf("an unshowable command was asked about or allowed: %+v, asked %d", v, len(a.reqs))
	}
}

// externalTool is a gated tool that acts through another program.
type externalTool struct{ fakeTool }

func (externalTool) Effect() Effect { return EffectExternal }

// TestEveryCommandCardSaysWhetherItMayConnect checks that the approval
// request of every command carries the sandbox line with the Network
// switch's state, and that other tools' requests do not.
func TestEveryCommandCardSaysWhetherItMayConnect(t *testing.T) {
	ctx := context.Background()
	for _, network := range []bool{false, true} {
		rec := &recordingApprover{decision: Deny}
		g := NewGate(rec)
		env := &Env{Workspace: t.TempDir(), AllowNetwork: network}
		g.Decide(ctx, env, RunShell(), "c", `{"command":"ls"}`)
		g.Decide(ctx, env, WriteFile(), "w", `{"path":"a.txt","content":"x"}`)
		if len(rec.reqs) != 2 {
			t.Fatalf("%d requests", len(rec.reqs))
		}
		if want := ShellSandboxNote(env); rec.reqs[0].Sandbox != want || want == "" {
			t.Errorf("network %v: the command's card says %q, want %q", network, rec.reqs[0].Sandbox, want)
		}
		if ok, _ := sandbox.Available(); ok && network != strings.Contains(rec.reqs[0].Sandbox, "network allowed") {
			t.Errorf("network %v: %q", network, rec.reqs[0].Sandbox)
		}
		if rec.reqs[1].Sandbox != "" {
			t.Errorf("write_file's card has a sandbox line: %q", rec.reqs[1].Sandbox)
		}
	}
}
