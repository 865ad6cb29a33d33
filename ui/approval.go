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
	// accepted holds the user's tick for each hunk of req.Diff (all
	// ticked at first); what is written is exactly the ticked hunks.
	accepted []bool
	answered []bool // the ticks as they were when the user decided
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
	d, _, err := a.ApproveHunks(ctx, req)
	return d, err
}

// ApproveHunks implements tool.HunkApprover: the card shows the diff with
// a tick per hunk, and the answer carries the ticked ones.
func (a *approver) ApproveHunks(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	p := &pendingApproval{req: req, ch: make(chan tool.Decision, 1)}
	if req.Diff != nil {
		p.accepted = make([]bool, len(req.Diff.Hunks))
		for i := range p.accepted {
			p.accepted[i] = true
		}
	}
	a.bridge.Do(func() { a.show(p) })
	select {
	case d := <-p.ch:
		return d, p.answered, nil
	case <-ctx.Done():
		a.bridge.Do(func() { a.withdraw(p) })
		return tool.Deny, nil, ctx.Err()
	}
}

// answer sends the decision with the hunks ticked now; a second answer is
// ignored. It runs on the UI goroutine, before the engine reads answered.
func (p *pendingApproval) answer(d tool.Decision) {
	if p.answered == nil && p.accepted != nil {
		p.answered = append([]bool(nil), p.accepted...)
	}
	select {
	case p.ch <- d:
	default:
	}
}

var _ tool.HunkApprover = (*approver)(nil)

// toolCallOf rebuilds the call an approval request is about.
func toolCallOf(r tool.ApprovalRequest) transcript.ToolCall {
	return transcript.ToolCall{ID: r.CallID, Name: r.Tool, Arguments: r.Arguments}
}
