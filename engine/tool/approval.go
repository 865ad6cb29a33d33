package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/diff"
	"github.com/tally-dev/tally/internal/text"
)

// ApprovalRequest describes one tool call awaiting the user's decision.
type ApprovalRequest struct {
	CallID    string // the model's id for the call
	Tool      string // tool name
	Arguments string // the raw JSON arguments, exactly as the model sent them
	Summary   string // a one-line human summary, see [Summarize]
	// Display is the whole call for review, wrapped over several lines
	// with control characters visible (see [Display]); approvers show it
	// rather than Summary.
	Display string
	// Note says why the user is asked when it is not the usual reason,
	// for example that a command will run without a sandbox or that a
	// file is on the secret-file deny list.
	Note string
	// Sandbox says, for a command, how it would run: in the sandbox or
	// not, and whether the session's Network switch lets it connect (see
	// [ShellSandboxNote]); "" for other tools. Approvers show it on every
	// command's card.
	Sandbox string
	// NoAlways is set when "always allow" cannot be granted for this call
	// (a read of a secret file, a command that is not sandboxed); an
	// ApproveAlways answer then approves this call only.
	NoAlways bool
	// SecretFile names the deny-listed file the call would read, if any;
	// only a person may allow that (ApproveAll refuses it).
	SecretFile string
	// Asker says which agent asks: "" for the session's own agent, or the
	// sub-agent's ID, kind and task (model-written, so shown escaped),
	// e.g. `sub-2 (general: "fix the tests")`. Approvers that may be asked
	// by several sub-agents at once show it with each request.
	Asker string
	// Diff is the change a write_file or edit_file call would make to its
	// file, from the content on disk now to the content proposed (New set
	// for a file that does not exist yet); nil for other tools, for a
	// secret file and for a call that would fail anyway. A [HunkApprover]
	// may accept only some of its hunks.
	Diff *diff.Diff
	// CommandRules are, for a run_shell call, the exact allow patterns
	// (see package cmdrule) that would let this command run without
	// asking from now on, one for each of its simple commands no rule
	// covers yet; empty when no rule can cover it. An approver offers
	// "Always allow this command" with them (the user may widen one with
	// a trailing *), adds them through the host, and answers Approve.
	CommandRules []string
}

// Decision is the user's answer to an [ApprovalRequest]. The zero value is
// [Deny].
type Decision int

// The possible decisions.
const (
	// Deny refuses this call.
	Deny Decision = iota
	// Approve allows this call only.
	Approve
	// ApproveAlways allows this call and every later call of the same tool
	// for the rest of the session.
	ApproveAlways
)

// String returns "deny", "approve" or "approve always".
func (d Decision) String() string {
	switch d {
	case Deny:
		return "deny"
	case Approve:
		return "approve"
	case ApproveAlways:
		return "approve always"
	default:
		return fmt.Sprintf("Decision(%d)", int(d))
	}
}

// Approver decides whether an approval-gated call may run. Implementations
// may block (for example while a dialog is open) and should return ctx.Err()
// when ctx is cancelled first.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ApproveAll approves every request without asking, except a read of a
// file on the secret-file deny list, which only a person may allow; it
// backs the CLI's --yes flag.
type ApproveAll struct{}

// Approve returns [Approve], or [Deny] for a secret-file read.
func (ApproveAll) Approve(_ context.Context, r ApprovalRequest) (Decision, error) {
	if r.SecretFile != "" {
		return Deny, nil
	}
	return Approve, nil
}

// DenyAll denies every request without asking.
type DenyAll struct{}

// Approve always returns [Deny].
func (DenyAll) Approve(context.Context, ApprovalRequest) (Decision, error) { return Deny, nil }

// Gate decides, for each call of an approval-gated tool, whether it runs
// without asking, asks the [Approver], or is refused, by the session's
// permission [Mode]; it remembers "always allow" answers as visible,
// revocable rules for its lifetime, which is meant to be one session. It
// is safe for concurrent use.
type Gate struct {
	approver Approver
	mu       sync.Mutex
	mode     Mode
	always   map[string]bool
	// sandboxed reports that commands run inside the sandbox; without it
	// every command asks, whatever the "always allow" rules (command
	// rules still apply), and full-auto is refused.
	sandboxed bool
	// commands supplies the command rules run_shell calls are checked
	// against; nil checks none.
	commands CommandRules
}

// NewGate returns a Gate in ModeAsk asking a. A nil a denies every call
// that would ask.
func NewGate(a Approver) *Gate {
	return &Gate{approver: a, mode: ModeAsk, always: make(map[string]bool)}
}

// SetSandboxed tells the gate whether commands run inside the sandbox.
// Turning it off while in full-auto mode falls back to ModeAsk.
func (g *Gate) SetSandboxed(ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sandboxed = ok
	if !ok && g.mode == ModeFullAuto {
		g.mode = ModeAsk
	}
}

// SetMode switches the permission mode. Full-auto is refused, with an
// error saying why, when commands cannot be sandboxed.
func (g *Gate) SetMode(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if m == ModeFullAuto && !g.sandboxed {
		return errors.New("full-auto mode needs the command sandbox, which is not available here; use auto-edit or ask")
	}
	g.mode = m
	return nil
}

// Mode returns the permission mode in force.
func (g *Gate) Mode() Mode {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mode
}

// Rules returns the tools the user allowed always in this session, sorted.
func (g *Gate) Rules() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.always))
	for k := range g.always {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Revoke removes the "always allow" rule of the named tool: its next call
// asks again.
func (g *Gate) Revoke(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.always, name)
}

// Verdict is the gate's answer for one call.
type Verdict struct {
	// Allowed says the call may run, with Ctx (which may carry a
	// one-call allowance, see [WithSecretReadAllowed]).
	Allowed bool
	Ctx     context.Context
	// Refusal is the result for the model when the call may not run.
	Refusal Result
	// Asked says the user was asked.
	Asked bool
}

// Decide applies the mode, the rules and the user's answer to one call:
//   - a call of a file tool on a secret file (see [SecretTarget]) always
//     asks, in every mode, and is never covered by "always allow";
//   - tools that need no approval run;
//   - a run_shell call a deny command rule meets (see [Gate.SetCommandRules])
//     is refused without asking, in every mode, with the reason;
//   - read-only refuses every other gated call;
//   - full-auto runs everything (commands must then require the sandbox,
//     see Env.RequireSandbox), except a command that deny rules are in
//     force for but that could not be checked against them, which is
//     refused; auto-edit runs workspace edits;
//   - a run_shell call the allow command rules cover runs, sandboxed or
//     not: a rule names the command, where "always allow" covers any;
//   - a tool the user allowed always runs, except a command that is not
//     sandboxed or could not be checked against the deny rules, which
//     asks every time;
//   - a call whose arguments cannot be shown whole (see [Display]) is
//     refused without asking;
//   - everything else asks the Approver; with none, it is refused. A
//     write_file or edit_file call is shown with its diff
//     (ApprovalRequest.Diff), and a [HunkApprover] is asked per hunk: the
//     Verdict's Ctx then carries the accepted hunks to the tool, which
//     writes only those.
//
// An error from the Approver (such as a cancelled context) is returned
// with a refusing Verdict.
func (g *Gate) Decide(ctx context.Context, env *Env, t Tool, callID, args string) (Verdict, error) {
	allow := Verdict{Allowed: true, Ctx: ctx}
	if t == nil {
		return allow, nil
	}
	name := t.Spec().Name
	g.mu.Lock()
	mode, always, sandboxed := g.mode, g.always[name], g.sandboxed
	g.mu.Unlock()
	req := ApprovalRequest{CallID: callID, Tool: name, Arguments: args, Summary: Summarize(name, json.RawMessage(args))}
	secret, isSecret := SecretTarget(env, name, json.RawMessage(args))
	var cmd commandCheck
	if !isSecret && t.NeedsApproval() {
		cmd = g.checkCommand(t, args)
	}
	switch {
	case isSecret:
		req.Note = fmt.Sprintf("%s matches the secret-file deny list: allow this one read only if the model really needs it", secret)
		req.NoAlways, req.SecretFile = true, secret
	case !t.NeedsApproval():
		return allow, nil
	case cmd.match.Denied:
		return Verdict{Ctx: ctx, Refusal: deniedByRule(cmd.match)}, nil
	case mode == ModeReadOnly:
		return Verdict{Ctx: ctx, Refusal: Result{IsError: true, Content: fmt.Sprintf(
			"%s: refused, the session is in read-only mode (%s); say what you would change instead, or ask the user to switch the mode", name, ModeReadOnly.Explain())}}, nil
	case mode == ModeFullAuto && cmd.unchecked != "":
		return Verdict{Ctx: ctx, Refusal: uncheckedRefusal(cmd.unchecked)}, nil
	case mode == ModeFullAuto:
		return allow, nil
	case mode == ModeAutoEdit && effectOf(t) == EffectEdits:
		return allow, nil
	case cmd.match.Allowed:
		// No person saw it: git in it runs none of the repository's
		// programs (see gitsafe).
		return Verdict{Allowed: true, Ctx: context.WithValue(ctx, ruleAllowedKey{}, true)}, nil
	case effectOf(t) == EffectCommands && !sandboxed:
		req.Note = "not sandboxed: this command can read and write anything your user account can"
		req.NoAlways = true
	case always && cmd.unchecked == "":
		return allow, nil
	}
	if cmd.unchecked != "" {
		joinNote(&req, cmd.unchecked)
	}
	if effectOf(t) == EffectCommands {
		req.Sandbox = ShellSandboxNote(env)
	}
	req.CommandRules = cmd.match.Propose
	display, ok := Display(name, json.RawMessage(args))
	if !ok {
		return Verdict{Ctx: ctx, Refusal: Result{IsError: true, Content: fmt.Sprintf(
			"%s: refused without asking, the arguments are over %s and too long for the user to review; write the script to a file with write_file and run that file", name, text.Plural(DisplayLimit, "byte"))}}, nil
	}
	req.Display = display
	if g.approver == nil {
		return Verdict{Ctx: ctx, Refusal: DeniedResult(name)}, nil
	}
	var pr *proposal
	if !isSecret {
		pr, req.Diff = proposeFor(ctx, env, t, args)
	}
	d, choice, err := choose(ctx, g.approver, req, pr)
	if err != nil {
		return Verdict{Ctx: ctx, Refusal: DeniedResult(name), Asked: true}, err
	}
	switch d {
	case ApproveAlways, Approve:
		if d == ApproveAlways && !req.NoAlways {
			g.mu.Lock()
			g.always[name] = true
			g.mu.Unlock()
		}
		if isSecret {
			ctx = WithSecretReadAllowed(ctx)
		}
		if choice != nil {
			ctx = withHunkChoice(ctx, *choice)
		}
		return Verdict{Allowed: true, Ctx: ctx, Asked: true}, nil
	default:
		refusal := DeniedResult(name)
		if isSecret {
			refusal.Content = fmt.Sprintf("%s: %q matches the secret-file deny list and the user did not allow reading it; do not retry, and ask the user if it is really needed", name, secret)
		}
		return Verdict{Ctx: ctx, Refusal: refusal, Asked: true}, nil
	}
}

// Allow is [Gate.Decide] without an Env, for callers that only need the
// yes or no.
func (g *Gate) Allow(ctx context.Context, t Tool, callID, args string) (allowed bool, err error) {
	v, err := g.Decide(ctx, nil, t, callID, args)
	return v.Allowed, err
}

// DeniedResult is the error Result to hand back to the model when the user
// denies a call of the named tool.
func DeniedResult(name string) Result {
	return Result{
		Content: fmt.Sprintf("denied: the user did not approve this %s call. Do not retry it as is; ask the user or take another approach.", name),
		IsError: true,
	}
}

// summaryLimit bounds the length of a summary in runes.
const summaryLimit = 200

// printableLine makes s a single printable line of at most max runes: newlines
// become " ⏎ ", other control characters are escaped, invalid UTF-8 is
// replaced and long text is cut with "…".
func printableLine(s string, max int) string {
	var b strings.Builder
	n := 0
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = "\uFFFD"
		case r == '\r' && i < len(s) && s[i] == '\n':
			continue
		case r == '\n' || r == '\r':
			piece = " ⏎ "
		case r == '\t':
			piece = " "
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			piece = fmt.Sprintf("\\u%04x", r)
		default:
			piece = string(r)
		}
		pr := utf8.RuneCountInString(piece)
		if n+pr > max {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		n += pr
	}
	return b.String()
}
