package agent

import (
	"encoding/json"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/record"
	"github.com/tally-dev/tally/storage"
)

// promptKey is the per-session state key of the stored promptState.
const promptKey = "prompt"

// promptState is the stored system prompt of a session: the prompt sent
// now, the one assembled at session start, and the compaction summary
// merged into it.
type promptState struct {
	System    string        `json:"system"`
	Spans     []prompt.Span `json:"spans"`
	Base      string        `json:"base"`
	BaseSpans []prompt.Span `json:"base_spans"`
	Summary   string        `json:"summary,omitempty"`
	Carry     compactCarry  `json:"carry,omitzero"`
	Carried   cycleCarry    `json:"carried,omitzero"`
}

// cycleCarry is what the earlier cycles handed to this one through its
// seed: the user's words (verbatim within the budget, stubs past it) and
// the work record, so that the next hand-off carries them on.
type cycleCarry struct {
	Words  []string      `json:"words,omitempty"`
	Stubs  []string      `json:"stubs,omitempty"`
	Record record.Record `json:"record,omitzero"`
}

// compactCarry is what a cycle's compactions carry from one to the next:
// the work record computed from the tool calls so far, the stubs of the
// user's words and the index of dropped messages already in the section,
// and the number of human messages before the log's first one (so turn
// numbers stay the cycle's). A new cycle starts with none.
type compactCarry struct {
	Record   record.Record   `json:"record,omitzero"`
	Earlier  compact.Earlier `json:"earlier,omitzero"`
	TurnBase int             `json:"turn_base,omitempty"`
}

// putPrompt stores the session's system prompt fields of st.
func putPrompt(tx *storage.Tx, id string, st state) error {
	data, err := json.Marshal(promptState{st.System, st.Spans, st.Base, st.BaseSpans, st.Summary, st.Carry, st.Carried})
	if err != nil {
		return err
	}
	return tx.PutState(id, promptKey, data)
}
