package ui

import (
	"context"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
)

// sessionOps is what the compaction, purge and archive views ask of an
// open session. *agent.Session provides it through engineOps; tests give
// the views fakes. Every method may block (several take the session's
// lock, held for a whole turn) and is only called off the UI goroutine.
type sessionOps interface {
	PreviewCompaction() (compact.Plan, error)
	Compact(ctx context.Context) (rewrite.Result, error)
	Archives() ([]cycle.Archive, error)
	NewCycle(ctx context.Context) error
	PreviewPurge(ctx context.Context) (rewrite.PurgePreview, error)
	ApplyPurge(p rewrite.PurgePreview) error
	Alerts() []string
	Messages() []transcript.Message
	ContextTokens() (int, bool)
	PostponeCompaction()
}

// engineOps adapts an engine session to sessionOps.
type engineOps struct{ *agent.Session }

var _ sessionOps = engineOps{}

func (e engineOps) PreviewCompaction() (compact.Plan, error) { return e.Compaction().Preview() }
func (e engineOps) Compact(ctx context.Context) (rewrite.Result, error) {
	return e.Compaction().Apply(ctx)
}
func (e engineOps) PreviewPurge(ctx context.Context) (rewrite.PurgePreview, error) {
	return e.Purge().Preview(ctx)
}
func (e engineOps) ApplyPurge(p rewrite.PurgePreview) error { return e.Purge().Apply(p) }
func (e engineOps) PostponeCompaction()                     { e.Compaction().Postpone() }
