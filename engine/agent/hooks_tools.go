package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// execute runs call c of the session's own agent with args, the model's
// own arguments (c holds the stored copy), through its PreToolUse and
// PostToolUse hooks and the gate.
func (t *turnLoop) execute(ctx context.Context, c transcript.ToolCall, args string) tool.Result {
	s := t.s
	if res, ok := step.Unusable(c); ok {
		return res
	}
	return hookRunner{s}.tool(ctx, s.env, c, args, func(ctx context.Context, args string) tool.Result {
		return t.executeGated(ctx, c, args)
	})
}

// toolHooks runs c's PreToolUse hooks, then run with the arguments they
// leave (a hook may deny the call, which then does not run, ask the user
// first, allow it without asking or change the arguments), then its
// PostToolUse hooks, whose answers are added to the result. A hook's
// "allow" only answers the question the gate would ask the user: the
// mode's refusals and the deny lists stay, and a secret file is still
// asked about. What hooks add goes into the result, at the tail of the
// conversation.
func (h hookRunner) tool(ctx context.Context, env tool.Env, c transcript.ToolCall, args string, run func(context.Context, string) tool.Result) tool.Result {
	s := h.s
	hs := s.hooks
	if why, stopped := hs.StopRequested(); stopped {
		return tool.Result{IsError: true, Content: "not run: a hook ended the turn (" + text.OneLine(why, 200) + ")"}
	}
	if !hs.Has(hooks.PreToolUse, c.Name) && !hs.Has(hooks.PostToolUse, c.Name) {
		return run(ctx, args)
	}
	var notes []string
	redacted := 0
	add := func(prefix, s string) {
		if t, n := hooks.Text(s); t != "" {
			notes, redacted = append(notes, prefix+t), redacted+n
		}
	}
	pre := h.run(ctx, env, hooks.PreToolUse, c.Name, hooks.Input{ToolName: c.Name, ToolInput: hooks.ToolInput(args)}, &c)
	if ctx.Err() != nil {
		return tool.Result{IsError: true, Content: "cancelled: the turn was stopped while the call's hooks ran"}
	}
	if pre.Stop {
		hs.RequestStop(pre.StopReason)
	}
	if pre.Permission == hooks.Deny || pre.Block || pre.Stop {
		why, n := hooks.Text(hooks.First(pre.PermissionReason, pre.Reason, pre.StopReason, "no reason given"))
		return tool.Result{IsError: true, Redacted: n, Content: fmt.Sprintf(
			"refused by a PreToolUse hook: %s\nThe call did not run; do not retry it as is, take another approach or ask the user.", why)}
	}
	ha := hookApproval{}
	if upd := pre.UpdatedInput; len(upd) > 0 && !hooks.SameJSON(args, string(upd)) {
		ha.change = "changed by a hook: " + hooks.ArgsChange(args, string(upd))
		args = string(upd)
		add("note: a PreToolUse hook changed the arguments of this call; it ran with ", args)
	}
	switch pre.Permission {
	case hooks.Allow:
		ha.allow = true
	case hooks.Ask:
		var refusal *tool.Result
		if ctx, refusal = h.ask(ctx, env, c, args, pre.PermissionReason, &ha); refusal != nil {
			return *refusal
		}
	}
	if ha != (hookApproval{}) {
		ctx = context.WithValue(ctx, hookApprovalKey{}, ha)
	}
	add("PreToolUse hook: ", pre.Context)
	res := run(ctx, args)
	if ctx.Err() == nil {
		post := h.run(ctx, env, hooks.PostToolUse, c.Name, hooks.Input{ToolName: c.Name, ToolInput: hooks.ToolInput(args),
			ToolResponse: hooks.ToolResponse(c.Name, res.Content, res.IsError)}, &c)
		if post.Block {
			add("PostToolUse hook: ", hooks.First(post.Reason, "the hook objected without saying why"))
		}
		add("PostToolUse hook: ", post.Context)
		if post.Stop {
			hs.RequestStop(post.StopReason)
		}
	}
	if len(notes) > 0 {
		res.Content = strings.TrimRight(res.Content, "\n") + "\n\n" + strings.Join(notes, "\n")
		res.Redacted += redacted
	}
	return res
}

// hookAsk asks the user about a call a PreToolUse hook wants confirmed
// ("ask"), where the gate might not: it returns the refusal when the user
// says no, and otherwise a ctx that answers the gate's own question, if
// it asks one, with the same yes. A call the gate refuses or asks about
// anyway (read-only mode, a secret file) is left to it, with the hook's
// reason on its question.
func (h hookRunner) ask(ctx context.Context, env tool.Env, c transcript.ToolCall, args, reason string, ha *hookApproval) (context.Context, *tool.Result) {
	s := h.s
	why, _ := hooks.Text(hooks.First(reason, "no reason given"))
	ask := "a PreToolUse hook asks you to confirm this call: " + text.OneLine(why, 300)
	t, ok := s.tools.Lookup(c.Name)
	_, secret := tool.SecretTarget(&env, c.Name, json.RawMessage(args))
	if !ok || secret || (t.NeedsApproval() && s.gate.Mode() == tool.ModeReadOnly) {
		ha.note = ask
		return ctx, nil
	}
	display, ok := tool.Display(c.Name, json.RawMessage(args))
	if !ok {
		return ctx, &tool.Result{IsError: true, Content: fmt.Sprintf(
			"%s: refused without asking, a hook asked for the user's confirmation but the arguments are too long for the user to review; write the script to a file with write_file and run that file", c.Name)}
	}
	req := tool.ApprovalRequest{CallID: c.ID, Tool: c.Name, Arguments: args, Summary: tool.Summarize(c.Name, json.RawMessage(args)),
		Display: display, Note: joinNotes(ha.change, ask), NoAlways: true}
	approver := namingAsker(s.subs, s.cfg.Approver)
	if approver == nil {
		r := tool.DeniedResult(c.Name)
		return ctx, &r
	}
	d, err := approver.Approve(ctx, req)
	if err != nil {
		return ctx, &tool.Result{IsError: true, Content: "error: approval failed: " + err.Error()}
	}
	if d != tool.Approve && d != tool.ApproveAlways {
		r := tool.DeniedResult(c.Name)
		return ctx, &r
	}
	ha.allow = true
	return ctx, nil
}

// hookApprovalKey carries a hookApproval in a call's context, for the
// session's approver wrapper (see hookApproved).
type hookApprovalKey struct{}

// hookApproval is what a call's PreToolUse hooks tell the question the
// gate may ask: the change they made to the arguments, their reason for
// asking, and whether they (or the user, asked for them) already allowed
// the call.
type hookApproval struct {
	allow  bool
	change string
	note   string
}

// hookApproved applies the call's hook answers to an approval request:
// the change a hook made and its reason are added to the request's Note,
// and a call a hook allowed is approved without asking unless it reads a
// secret file, which only a person may allow.
func hookApproved(ctx context.Context, req tool.ApprovalRequest) (tool.ApprovalRequest, bool) {
	ha, ok := ctx.Value(hookApprovalKey{}).(hookApproval)
	if !ok {
		return req, false
	}
	req.Note = joinNotes(ha.change, ha.note, req.Note)
	return req, ha.allow && req.SecretFile == ""
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	return strings.Join(slices.DeleteFunc(slices.Clone(notes), func(s string) bool { return s == "" }), "; ")
}
