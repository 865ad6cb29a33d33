package agent

import (
	"context"

	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
)

// namingAsker wraps the host's approver so that every request says which
// agent asks (tool.ApprovalRequest.Asker): the sub-agents of one batch
// share the session's gate and run at the same time, and a person asked
// about three calls at once must know whose call each one is.
func namingAsker(subs *subagent.Hub, a tool.Approver) tool.Approver {
	if a == nil {
		return nil
	}
	n := namer{subs: subs, a: a}
	if h, ok := a.(tool.HunkApprover); ok {
		return hunkNamer{namer: n, h: h}
	}
	return n
}

type namer struct {
	subs *subagent.Hub // names the running sub-agent whose call it is
	a    tool.Approver
}

// Approve implements tool.Approver.
func (n namer) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	req.Asker = n.subs.AskerOf(ctx)
	req, auto := hookApproved(ctx, req) // a hook allowed the call
	if auto {
		return tool.Approve, nil
	}
	return n.a.Approve(ctx, req)
}

type hunkNamer struct {
	namer
	h tool.HunkApprover
}

// ApproveHunks implements tool.HunkApprover.
func (n hunkNamer) ApproveHunks(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	req.Asker = n.subs.AskerOf(ctx)
	req, auto := hookApproved(ctx, req) // a hook allowed the call
	if auto {
		return tool.Approve, nil, nil
	}
	return n.h.ApproveHunks(ctx, req)
}
