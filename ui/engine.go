package ui

import (
	"context"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
)

// sessionOps is what the compaction, purge and archive views ask of an
// open session. *agent.Session provides it through engineOps; tests give
// the views fakes. Every method may block (several take the session's
// lock, held for a whole turn) and is only called off the UI goroutine.
type sessionOps interface {
	PreviewCompaction() (compact.Plan, error)
	Compact(ctx context.Context) (agent.CompactionResult, error)
	Archives() ([]cycle.Archive, error)
	NewCycle(ctx context.Context) error
	PreviewPurge(ctx context.Context) (agent.PurgePreview, error)
	ApplyPurge(p agent.PurgePreview) error
	Alerts() []string
	Messages() []transcript.Message
	ContextTokens() (int, bool)
	PostponeCompaction()
}

// engineOps adapts an engine session to sessionOps.
type engineOps struct{ *agent.Session }

var _ sessionOps = engineOps{}
