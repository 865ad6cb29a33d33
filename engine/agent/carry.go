package agent

import (
	"encoding/json"

	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/storage"
)

// promptKey is the per-session state key of the stored promptState.
const promptKey = "prompt"

// promptState is the stored system prompt of a session: the prompt sent
// now, the one assembled at session start, and the compaction summary
// merged into it.
type promptState struct {
	System    string             `json:"system"`
	Spans     []prompt.Span      `json:"spans"`
	Base      string             `json:"base"`
	BaseSpans []prompt.Span      `json:"base_spans"`
	Summary   string             `json:"summary,omitempty"`
	Carry     rewrite.Carry      `json:"carry,omitzero"`
	Carried   rewrite.CycleCarry `json:"carried,omitzero"`
}

// putPrompt stores the session's system prompt fields of st.
func putPrompt(tx *storage.Tx, id string, st state) error {
	data, err := json.Marshal(promptState{st.System, st.Spans, st.Base, st.BaseSpans, st.Summary, st.Carry, st.Carried})
	if err != nil {
		return err
	}
	return tx.PutState(id, promptKey, data)
}
