package agent

import (
	"fmt"

	"github.com/tally-dev/tally/engine/transcript"
)

// untrustedSections are the system prompt sections whose text comes from
// the workspace rather than from Tally.
var untrustedSections = map[string]bool{"project_instructions": true, "workspace_layout": true}

// Tags reports every engine tag found where the engine did not put it:
// in the workspace's sections of the system prompt, and anywhere in the
// current cycle's messages outside the engine's own blocks (see
// transcript.Forged). An empty result means no text from a file, a tool,
// the human or the model could pass for an engine block.
func (h Audit) Tags() []string {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	sys, spans := s.st.System, s.st.Spans
	for i, sp := range spans {
		if !untrustedSections[sp.Name] {
			continue
		}
		end := len(sys)
		if i+1 < len(spans) {
			end = spans[i+1].Offset
		}
		if sp.Offset < 0 || sp.Offset > end || end > len(sys) {
			out = append(out, fmt.Sprintf("system prompt section %s has a span outside the prompt", sp.Name))
			continue
		}
		if tags := transcript.ReservedTags(sys[sp.Offset:end]); len(tags) > 0 {
			out = append(out, fmt.Sprintf("system prompt section %s carries %v", sp.Name, tags))
		}
	}
	for i := range s.log.Len() {
		for _, f := range transcript.Forged(s.log.At(i).Msg) {
			out = append(out, fmt.Sprintf("message %d: %s", i, f))
		}
	}
	return out
}
