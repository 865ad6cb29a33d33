package compaction

import (
	"context"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
)

// Ops is what the views ask of an open session's engine side.
// EngineOps provides it for an *agent.Session; tests give the views
// fakes. The previews, applying and a new cycle may block (they wait for
// a running turn); every method is only called off the UI goroutine.
type Ops interface {
	// PreviewCompaction plans a manual compaction without applying it.
	PreviewCompaction() (compact.Plan, error)
	// Compact applies a compaction; ctx cancels its summary request.
	Compact(ctx context.Context) (rewrite.Result, error)
	// Archives returns the session's closed cycles.
	Archives() ([]cycle.Archive, error)
	// NewCycle closes the cycle: the model writes its hand-off brief.
	NewCycle(ctx context.Context) error
	// PreviewPurge asks the model which messages can go.
	PreviewPurge(ctx context.Context) (rewrite.PurgePreview, error)
	// ApplyPurge applies a purge preview.
	ApplyPurge(p rewrite.PurgePreview) error
	// Messages returns the log as it is.
	Messages() []transcript.Message
	// ContextTokens returns the context's size and whether it is exact.
	ContextTokens() (int, bool)
	// PostponeCompaction answers a coming automatic compaction's notice
	// with "Not now".
	PostponeCompaction()
}

// EngineOps adapts an engine session to Ops.
type EngineOps struct{ *agent.Session }

var _ Ops = EngineOps{}

// PreviewCompaction implements Ops.
func (e EngineOps) PreviewCompaction() (compact.Plan, error) { return e.Compaction().Preview() }

// Compact implements Ops.
func (e EngineOps) Compact(ctx context.Context) (rewrite.Result, error) {
	return e.Compaction().Apply(ctx)
}

// PreviewPurge implements Ops.
func (e EngineOps) PreviewPurge(ctx context.Context) (rewrite.PurgePreview, error) {
	return e.Purge().Preview(ctx)
}

// ApplyPurge implements Ops.
func (e EngineOps) ApplyPurge(p rewrite.PurgePreview) error { return e.Purge().Apply(p) }

// Archives implements Ops.
func (e EngineOps) Archives() ([]cycle.Archive, error) { return e.Compaction().Archives() }

// NewCycle implements Ops.
func (e EngineOps) NewCycle(ctx context.Context) error { return e.Compaction().NewCycle(ctx) }

// Messages implements Ops.
func (e EngineOps) Messages() []transcript.Message { return e.Snapshot().Messages() }

// ContextTokens implements Ops.
func (e EngineOps) ContextTokens() (int, bool) {
	v := e.Snapshot()
	return v.Level, v.Exact
}

// PostponeCompaction implements Ops.
func (e EngineOps) PostponeCompaction() { e.Compaction().Postpone() }
