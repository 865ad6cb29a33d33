package chat

import (
	"context"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// Approval is a tool call waiting for the user's decision. The
// engine goroutine blocks on ch; the card's buttons answer it.
type Approval struct {
	Req tool.ApprovalRequest // the question asked
	Ch  chan tool.Decision   // buffered: answering never blocks the UI
	// Accepted holds the user's tick for each hunk of req.Diff (all
	// ticked at first); what is written is exactly the ticked hunks.
	Accepted []bool
	answered []bool // the ticks as they were when the user decided
}

// Approver implements tool.Approver for the window: it shows the request
// on its tool card (through the bridge) and blocks the engine goroutine
// until the user decides or the turn is stopped.
type Approver struct {
	Do       func(func())      // runs a function on the UI goroutine
	Show     func(p *Approval) // on the UI goroutine
	Withdraw func(p *Approval) // on the UI goroutine, after a stop
}

// Approve implements tool.Approver.
func (a *Approver) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	d, _, err := a.ApproveHunks(ctx, req)
	return d, err
}

// ApproveHunks implements tool.HunkApprover: the card shows the diff with
// a tick per hunk, and the answer carries the ticked ones.
func (a *Approver) ApproveHunks(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	p := &Approval{Req: req, Ch: make(chan tool.Decision, 1)}
	if req.Diff != nil {
		p.Accepted = make([]bool, len(req.Diff.Hunks))
		for i := range p.Accepted {
			p.Accepted[i] = true
		}
	}
	a.Do(func() { a.Show(p) })
	select {
	case d := <-p.Ch:
		return d, p.answered, nil
	case <-ctx.Done():
		a.Do(func() { a.Withdraw(p) })
		return tool.Deny, nil, ctx.Err()
	}
}

// Answer sends the decision with the hunks ticked now; a second answer is
// ignored. It runs on the UI goroutine, before the engine reads answered.
func (p *Approval) Answer(d tool.Decision) {
	if p.answered == nil && p.Accepted != nil {
		p.answered = append([]bool(nil), p.Accepted...)
	}
	select {
	case p.Ch <- d:
	default:
	}
}

var _ tool.HunkApprover = (*Approver)(nil)

// ToolCallOf rebuilds the call an approval request is about.
func ToolCallOf(r tool.ApprovalRequest) transcript.ToolCall {
	return transcript.ToolCall{ID: r.CallID, Name: r.Tool, Arguments: r.Arguments}
}
