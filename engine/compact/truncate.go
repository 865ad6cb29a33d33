package compact

import (
	"slices"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/transcript"
)

// Emergency limits (DESIGN §4).
const (
	// minKeep is the fewest messages emergency truncation leaves.
	minKeep = 4
	// MaxEmergencyPerTurn is how many emergency recoveries one turn may
	// run; the caller counts them and fails the turn after the last.
	MaxEmergencyPerTurn = 2
)

// Truncate is the emergency layer: it drops messages from the front until
// the message tokens fit budget. An assistant message and the results of its
// calls are dropped together, the newest plain user text is never dropped
// (later messages go instead), nor is an activated skill's instructions
// with its call, and at least [minKeep] messages stay even if
// the budget is still exceeded. tokens gives each message's count; missing
// entries are counted. msgs is not modified. It returns the kept messages
// in order and how many were dropped.
func Truncate(msgs []transcript.Message, tokens []int, budget int) ([]transcript.Message, int) {
	toks := messageTokens(Input{Messages: msgs, Tokens: tokens})
	drop := truncation(msgs, toks, budget)
	kept := make([]transcript.Message, 0, len(msgs))
	dropped := 0
	for i, m := range msgs {
		if drop[i] {
			dropped++
			continue
		}
		kept = append(kept, m)
	}
	return kept, dropped
}

// truncation marks the messages Truncate drops.
func truncation(msgs []transcript.Message, toks []int, budget int) []bool {
	drop := make([]bool, len(msgs))
	total := sum(toks)
	if len(msgs) <= minKeep || total <= budget {
		return drop
	}
	protected := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].IsPlainUserText() {
			protected = i
			break
		}
	}
	skills := skill.Activations(msgs)
	g := groups(msgs)
	kept := len(msgs)
	for i := 0; i < len(msgs) && total > budget; i++ {
		unit := g.members(i) // the message with its call or results
		if containsIndex(unit, protected) || alreadyDropped(drop, unit) || slices.ContainsFunc(unit, func(j int) bool { return skills[j] }) {
			continue
		}
		if kept-len(unit) < minKeep {
			break
		}
		for _, j := range unit {
			drop[j] = true
			total -= toks[j]
		}
		kept -= len(unit)
	}
	return drop
}

func containsIndex(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func alreadyDropped(drop []bool, unit []int) bool {
	for _, j := range unit {
		if drop[j] {
			return true
		}
	}
	return false
}
