package ui

import (
	"context"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// pendingApproval is a tool call waiting for the user's decision. The
// engine goroutine blocks on ch; the card's buttons answer it.
type pendingApproval struct {
	req tool.ApprovalRequest
	ch  chan tool.Decision // buffered: answering never blocks the UI
}

// approver implements tool.Approver for the window: it shows the request
// on its tool card (through the bridge) and blocks the engine goroutine
// until the user decides or the turn is stopped.
type approver struct {
	bridge   *Bridge
	show     func(p *pendingApproval) // on the UI goroutine
	withdraw func(p *pendingApproval) // on the UI goroutine, after a stop
}

// Approve implements tool.Approver.
func (a *approver) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	p := &pendingApproval{req: req, ch: make(chan tool.Decision, 1)}
	a.bridge.Do(func() { a.show(p) })
	select {
	case d := <-p.ch:
		return d, nil
	case <-ctx.Done():
		a.bridge.Do(func() { a.withdraw(p) })
		return tool.Deny, ctx.Err()
	}
}

// answer sends the decision; a second answer is ignored.
func (p *pendingApproval) answer(d tool.Decision) {
	select {
	case p.ch <- d:
	default:
	}
}

var _ tool.Approver = (*approver)(nil)

// toolCallOf rebuilds the call an approval request is about.
func toolCallOf(r tool.ApprovalRequest) transcript.ToolCall {
	return transcript.ToolCall{ID: r.CallID, Name: r.Tool, Arguments: r.Arguments}
}
