package rewrite

import (
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/record"
)

// State is the part of a session's stored state that its rewrites own.
// The conversation keeps it inside its own stored state; the summary and
// what compactions and cycles carry are stored with the system prompt
// (they change only when it does), the rest with every commit.
type State struct {
	// Summary is the compaction summary section merged after the
	// system prompt.
	Summary string `json:"-"`
	// Carry is what the cycle's compactions computed and the next one
	// builds on.
	Carry Carry `json:"-"`
	// Carried is what the earlier cycles handed over.
	Carried CycleCarry `json:"-"`
	// Breakers is the state of the compaction circuit breakers.
	Breakers compact.Breakers `json:"breakers"`
	// CycleStarted and CycleRequests describe the current cycle.
	CycleStarted  time.Time `json:"cycle_started,omitzero"`
	CycleRequests int       `json:"cycle_requests"`
}

// CycleCarry is what the earlier cycles handed to this one through its
// seed: the user's words (verbatim within the budget, stubs past it) and
// the work record, so that the next hand-off carries them on.
type CycleCarry struct {
	Words  []string      `json:"words,omitempty"`
	Stubs  []string      `json:"stubs,omitempty"`
	Record record.Record `json:"record,omitzero"`
}

// Carry is what a cycle's compactions carry from one to the next: the
// work record computed from the tool calls so far, the stubs of the
// user's words and the index of dropped messages already in the section,
// and the number of human messages before the log's first one (so turn
// numbers stay the cycle's). A new cycle starts with none.
type Carry struct {
	Record   record.Record   `json:"record,omitzero"`
	Earlier  compact.Earlier `json:"earlier,omitzero"`
	TurnBase int             `json:"turn_base,omitempty"`
	// RemovedTurns are the turns among TurnBase whose human messages a
	// compaction removed (compact.Input.RemovedTurns).
	RemovedTurns []int `json:"removed_turns,omitempty"`
}
