package acp

import (
	"context"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
)

// The permission options the server offers, by ID.
const (
	optionAllow   = "allow_once"    // tool.Approve
	optionAlways  = "allow_always"  // tool.ApproveAlways: the tool for the rest of the session
	optionCommand = "allow_command" // the proposed command rules for the workspace, then tool.Approve
	optionReject  = "reject_once"   // tool.Deny
)

// approver asks the client with session/request_permission. It is the
// session's tool.Approver.
type approver struct{ st *session }

// Approve implements tool.Approver: it asks the client about req and maps
// the answer (allow once, always allow the tool, always allow the command
// in this workspace, reject). An unknown option or a client that cannot
// answer denies the call; the "cancelled" outcome cancels the turn, and a
// cancelled turn returns ctx's error.
func (a *approver) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	st := a.st
	st.mu.Lock()
	ci := st.calls[req.CallID]
	st.mu.Unlock()
	if ci == nil {
		// A sub-agent's call, never announced: announce it now.
		ci = &callInfo{name: req.Tool, title: req.Summary, kind: kindOf(req.Tool)}
		if req.Asker != "" {
			ci.title = req.Summary + " (sub-agent " + req.Asker + ")"
		}
		if req.Diff != nil {
			ci.diff = hunkContent(req.Diff, st.abs(req.Diff.Path))
		}
		st.mu.Lock()
		st.calls[req.CallID] = ci // its result ends it (see event)
		st.mu.Unlock()
		st.send(acp.StartToolCall(acp.ToolCallId(req.CallID), ci.title,
			acp.WithStartKind(ci.kind), acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartContent(ci.diff)))
	}
	content := append([]acp.ToolCallContent(nil), ci.diff...)
	if len(content) == 0 && req.Diff != nil {
		content = hunkContent(req.Diff, st.abs(req.Diff.Path))
	}
	if req.Sandbox != "" {
		content = append(content, acp.ToolContent(acp.TextBlock(req.Sandbox)))
	}
	if req.Note != "" {
		content = append(content, acp.ToolContent(acp.TextBlock(req.Note)))
	}
	rules := req.CommandRules
	allowCommand := st.sess.Permissions().AllowCommand
	options := []acp.PermissionOption{{OptionId: optionAllow, Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}}
	if len(rules) > 0 {
		options = append(options, acp.PermissionOption{OptionId: optionCommand, Kind: acp.PermissionOptionKindAllowAlways,
			Name: "Always allow " + strings.Join(rules, " · ") + " in this workspace"})
	}
	if !req.NoAlways {
		options = append(options, acp.PermissionOption{OptionId: optionAlways, Kind: acp.PermissionOptionKindAllowAlways,
			Name: "Always allow " + req.Tool + " in this session"})
	}
	options = append(options, acp.PermissionOption{OptionId: optionReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce})
	call := acp.ToolCallUpdate{
		ToolCallId: acp.ToolCallId(req.CallID), Title: acp.Ptr(ci.title), Kind: acp.Ptr(ci.kind),
		Status: acp.Ptr(acp.ToolCallStatusPending), Content: content, Locations: ci.locations, RawInput: ci.input,
	}
	resp, err := st.srv.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(st.id), ToolCall: call, Options: options,
	})
	if ctx.Err() != nil {
		return tool.Deny, ctx.Err()
	}
	if err != nil {
		st.srv.logf("session %s: the client did not answer the approval of %s (%s), so it was denied", st.id, text.FirstLine(req.Summary, 0), sentence(err.Error()))
		return tool.Deny, nil
	}
	if resp.Outcome.Selected == nil {
		// "cancelled": the client cancelled the turn (its session/cancel
		// may still be on its way), so the turn stops here.
		st.cancel()
		if ctx.Err() != nil {
			return tool.Deny, ctx.Err()
		}
		return tool.Deny, nil
	}
	d := tool.Deny
	switch resp.Outcome.Selected.OptionId {
	case optionAllow:
		d = tool.Approve
	case optionAlways:
		d = tool.ApproveAlways
		if req.NoAlways {
			d = tool.Approve
		}
	case optionCommand:
		d = tool.Approve
		for _, p := range rules {
			if err := allowCommand(p); err != nil {
				st.srv.logf("session %s: the command rule %s was not added (%s); only this call is approved", st.id, p, sentence(err.Error()))
			}
		}
	}
	if d != tool.Deny {
		st.send(acp.UpdateToolCall(acp.ToolCallId(req.CallID), acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	}
	return d, nil
}
