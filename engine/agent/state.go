package agent

import (
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/tool"
)

// state is the engine-owned part of a stored session, rewritten with every
// committed step. The system prompt fields are kept apart (see
// promptState): they change only at session start, a compaction summary or
// a new cycle, and would otherwise be rewritten on every step.
type state struct {
	System     string            `json:"-"`
	Spans      []prompt.Span     `json:"-"`
	WorkingSet status.WorkingSet `json:"working_set"`
	Requests   int               `json:"requests"`
	Anchor     *anchorState      `json:"anchor,omitempty"`
	// Calibration holds the provider's units across a rebuild (see
	// calibration); nil while the anchor is valid or nothing was billed.
	Calibration *calibration `json:"calibration,omitempty"`
	// Kept is what the status blocks so far leave for the next one: the
	// last state_version, the last block in the log, the deltas since
	// the last full block.
	status.Kept
	// Base is the system prompt assembled at session start; Summary the
	// the compaction summary is merged after it (see rewrite.State).
	Base      string        `json:"-"`
	BaseSpans []prompt.Span `json:"-"`
	// State is what the rewrites own: the compaction summary (System =
	// Base + Summary), what compactions and cycles carry (stored with
	// the prompt, see promptState), the breakers and the cycle's start.
	rewrite.State
	// Mode is the session's permission mode and AllowNetwork its "allow
	// network" switch for commands.
	Mode         tool.Mode `json:"mode,omitempty"`
	AllowNetwork bool      `json:"allow_network,omitempty"`
	// Roots are the session's additional folders (see Config.Roots).
	Roots []string `json:"roots,omitempty"`
	// Skills are the names of the skills in the system prompt, sorted;
	// the skill tool is offered when there is one.
	Skills []string `json:"skills,omitempty"`
	// Repin is the model switch the next turn row records (Row.Repin),
	// kept until that request is made.
	Repin string `json:"repin,omitempty"`
}

type anchorState struct {
	Billed, At, Est int
}
