package agent

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/transcript"
)

// UnusableCallName stands in for the name of a tool call that cannot be
// replayed as the model sent it (an empty name, or one a strict server
// refuses). The call keeps its place in the transcript and gets an error
// result saying what was wrong, so every later request stays valid.
const UnusableCallName = "invalid_tool_call"

// toolNameRe is what OpenAI-compatible servers accept as a function name.
var toolNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// intakeCalls turns the calls of one reply into transcript calls a strict
// server will accept when they are replayed: every call gets an id that is
// unique in the cycle (a missing or repeated id is replaced), a name the
// API accepts (an unusable one is replaced by UnusableCallName with the
// reason in the arguments), and normalised arguments (see normalizeArgs).
func (s *Session) intakeCalls(in []llm.ToolCall) []transcript.ToolCall {
	if len(in) == 0 {
		return nil
	}
	used := s.callIDs()
	calls := make([]transcript.ToolCall, 0, len(in))
	for i, c := range in {
		id := c.ID
		if id == "" || used[id] || len(id) > 128 || len(transcript.ReservedTags(id)) > 0 {
			id = freshID(used, fmt.Sprintf("call_%d_%d", s.st.Requests+1, i))
		}
		used[id] = true
		call := transcript.ToolCall{ID: id, Name: c.Name, Arguments: normalizeArgs(c.Arguments)}
		if !toolNameRe.MatchString(c.Name) {
			why := "this tool call had no tool name; call a tool from the list by its exact name"
			if c.Name != "" {
				why = fmt.Sprintf("there is no tool named %q; call a tool from the list by its exact name", clip(transcript.NeutralizeLine(c.Name), 80))
			}
			b, _ := json.Marshal(map[string]string{"_unusable_call": why})
			call.Name, call.Arguments = UnusableCallName, string(b)
		}
		calls = append(calls, call)
	}
	return calls
}

// callIDs returns the tool call ids already used in this cycle's log.
func (s *Session) callIDs() map[string]bool {
	used := map[string]bool{}
	for i := range s.log.Len() {
		for _, c := range s.log.At(i).Msg.ToolCalls {
			used[c.ID] = true
		}
	}
	return used
}

// freshID returns base, or base with a suffix, that is not in used.
func freshID(used map[string]bool, base string) string {
	id := base
	for n := 2; used[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	return id
}
