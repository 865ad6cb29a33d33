package agent

import (
	"context"
	"fmt"

	"github.com/tally-dev/tally/engine/compact"
)

// emergency recovers from a provider's "context length exceeded": a forced
// compaction, then hard truncation from the front if that is not enough.
// At most compact.MaxEmergencyPerTurn recoveries run per turn.
func (s *Session) emergency(ctx context.Context, cause error) error {
	if s.turn.emergencies >= compact.MaxEmergencyPerTurn {
		return fmt.Errorf("the request is still too long for the model after %d emergency recoveries (%w); start a new cycle or session", s.turn.emergencies, cause)
	}
	s.turn.emergencies++
	s.turn.rejectedAt, _ = s.level()
	in := s.compactInput(true)
	res, err := s.compactNow(ctx, in, compact.PlanCascade(in), "emergency compaction")
	if err != nil && ctx.Err() != nil {
		return err
	}
	compacted := err == nil && res.Applied
	// The provider counts more than our estimate does: aim a quarter
	// below the level it rejected, or at the threshold if that is lower.
	level, _ := s.level()
	target := min(s.compactionThreshold(), s.turn.rejectedAt*3/4)
	if s.turn.rejectedAt == 0 {
		target = s.compactionThreshold()
	}
	if level+statusReserve <= target {
		return nil
	}
	// The level may be in the provider's units (anchored) and the log's
	// counts are ours: remove the excess scaled to our units.
	est := s.prefixTok + s.log.Tokens()
	ratio := 1.0
	if est > 0 && level > est {
		ratio = float64(level) / float64(est)
	}
	excess := level + statusReserve - target
	budget := s.log.Tokens() - int(float64(excess)/ratio) - 1
	kept, dropped := compact.Truncate(s.log.Messages(), s.tokensOf(), max(budget, 0))
	if dropped == 0 && compacted {
		return nil // the compaction shrank it; let the retry tell
	}
	if dropped == 0 {
		return fmt.Errorf("the request is too long for the model, and after emergency recovery nothing more can be dropped (%w); start a new cycle or session", cause)
	}
	_, err = s.rebuild(rewrite{Kind: RebuildEmergency, Reason: "emergency truncation", Messages: kept})
	return err
}
