package ui

import (
	"context"
	"strings"

	"github.com/tally-dev/tally/config"
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
}

// engineOps adapts an engine session to sessionOps.
type engineOps struct{ *agent.Session }

var _ sessionOps = engineOps{}

// compactionMode maps the saved setting to the engine's mode.
func compactionMode(s string) agent.CompactionMode {
	switch s {
	case config.CompactionAsk:
		return agent.CompactAsk
	case config.CompactionOff:
		return agent.CompactOff
	}
	return agent.CompactAuto
}

// cycleAt maps the saved cycle settings to agent.Config.CycleAt: 0 is the
// engine default, a negative value turns cycles off.
func cycleAt(s config.Settings) float64 {
	switch {
	case s.CyclesOff:
		return -1
	case s.CycleAt > 0 && s.CycleAt <= 1:
		return s.CycleAt
	}
	return 0
}

// applyEngineSettings copies the compaction, cycle and price settings into
// a session's configuration.
func applyEngineSettings(cfg *agent.Config, s config.Settings, asker agent.Asker) {
	cfg.Compaction = compactionMode(s.Compaction)
	cfg.CycleAt = cycleAt(s)
	cfg.Asker = asker
	cfg.Shell = agent.ShellConfig(s.Shell)
	if p, ok := s.PriceFor(cfg.ModelName); ok {
		cfg.HitPrice, cfg.MissPrice = p.CacheHit, p.CacheMiss
	}
}

// rebuildKind classifies a rebuild reason: "cycle", "purge" or
// "compaction".
func rebuildKind(reason string) string {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "cycle"):
		return "cycle"
	case strings.Contains(r, "purge"):
		return "purge"
	}
	return "compaction"
}
