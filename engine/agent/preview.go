package agent

import (
	"context"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// Preview computes the change a write_file or edit_file call of this
// session's agent would make to its file (see tool.Preview), without
// writing: for a host showing an editor's diff beside the call. ok is
// false for other tools, for a secret file and for a call that would fail.
// Call it from the OnEvent of the call's EventToolStart, which runs before
// the call does, or while no turn runs.
func (h Files) Preview(ctx context.Context, c transcript.ToolCall) (tool.Change, bool) {
	s := h.s
	t, ok := s.tools.Lookup(c.Name)
	if !ok {
		return tool.Change{}, false
	}
	return tool.Preview(ctx, &s.env, t, c.Arguments)
}
