package agent

import (
	"fmt"

	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/transcript"
)

// Tags reports every engine tag found where the engine did not put it:
// in the workspace's sections of the system prompt (prompt.ForgedTags),
// and anywhere in the current cycle's messages outside the engine's own
// blocks (see transcript.Forged). An empty result means no text from a
// file, a tool, the human or the model could pass for an engine block.
func (h Audit) Tags() []string {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	out := prompt.ForgedTags(s.st.System, s.st.Spans)
	for i := range s.log.Len() {
		for _, f := range transcript.Forged(s.log.At(i).Msg) {
			out = append(out, fmt.Sprintf("message %d: %s", i, f))
		}
	}
	return out
}
