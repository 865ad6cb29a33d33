package prompt

import (
	"fmt"

	"github.com/tally-dev/tally/engine/transcript"
)

// fromWorkspace are the sections whose text comes from the workspace
// rather than from Tally.
var fromWorkspace = map[string]bool{"project_instructions": true, "workspace_layout": true}

// ForgedTags reports every engine tag in the sections of system (laid out
// by spans) whose text comes from the workspace, and every span that
// points outside the prompt: an empty result means no file of the
// workspace could pass for an engine block in the system prompt.
func ForgedTags(system string, spans []Span) []string {
	var out []string
	for i, sp := range spans {
		if !fromWorkspace[sp.Name] {
			continue
		}
		end := len(system)
		if i+1 < len(spans) {
			end = spans[i+1].Offset
		}
		if sp.Offset < 0 || sp.Offset > end || end > len(system) {
			out = append(out, fmt.Sprintf("system prompt section %s has a span outside the prompt", sp.Name))
			continue
		}
		if tags := transcript.ReservedTags(system[sp.Offset:end]); len(tags) > 0 {
			out = append(out, fmt.Sprintf("system prompt section %s carries %v", sp.Name, tags))
		}
	}
	return out
}
