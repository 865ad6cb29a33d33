package agent

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
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
// reason in the arguments), and normalised arguments (see normalizeArgs)
// with their secrets redacted (see secrets.JSONStrings). It also returns, by call
// id, the arguments each tool runs with (the model's own text, which
// redaction and neutralising never change) and how many secrets it
// redacted.
func (s *Session) intakeCalls(in []llm.ToolCall) ([]transcript.ToolCall, map[string]string, int) {
	if len(in) == 0 {
		return nil, nil, 0
	}
	return intakeCalls(in, s.callIDs(), fmt.Sprintf("call_%d", s.st.Requests+1))
}

// intakeCalls is the rule of Session.intakeCalls for any log (a session's
// or a sub-agent's): used holds the ids the log already has, and a
// replaced id is prefix_<index> made unique.
func intakeCalls(in []llm.ToolCall, used map[string]bool, prefix string) ([]transcript.ToolCall, map[string]string, int) {
	calls := make([]transcript.ToolCall, 0, len(in))
	run := make(map[string]string, len(in))
	redacted := 0
	for i, c := range in {
		id := c.ID
		if id == "" || used[id] || len(id) > 128 || len(transcript.ReservedTags(id)) > 0 {
			id = freshID(used, fmt.Sprintf("%s_%d", prefix, i))
		}
		used[id] = true
		stored, n := secrets.JSONStrings(c.Arguments)
		redacted += n
		call := transcript.ToolCall{ID: id, Name: c.Name, Arguments: normalizeArgs(stored)}
		run[id] = c.Arguments
		if !toolNameRe.MatchString(c.Name) {
			why := "this tool call had no tool name; call a tool from the list by its exact name"
			if c.Name != "" {
				why = fmt.Sprintf("there is no tool named %q; call a tool from the list by its exact name", text.Clip(transcript.NeutralizeLine(c.Name), 80))
			}
			b, _ := json.Marshal(map[string]string{"_unusable_call": why})
			call.Name, call.Arguments = UnusableCallName, string(b)
			delete(run, id)
		}
		calls = append(calls, call)
	}
	return calls, run, redacted
}

// runArgs returns the arguments call c runs with: the model's own text from
// run, or the stored copy for a call intake did not see (one replayed from
// the store).
func runArgs(run map[string]string, c transcript.ToolCall) string {
	if a, ok := run[c.ID]; ok {
		return a
	}
	return c.Arguments
}

// callIDs returns the tool call ids already used in this cycle's log.
func (s *Session) callIDs() map[string]bool { return idsOf(s.log) }

// idsOf returns the tool call ids a log holds.
func idsOf(log *transcript.AppendLog) map[string]bool {
	used := map[string]bool{}
	for i := range log.Len() {
		for _, c := range log.At(i).Msg.ToolCalls {
			used[c.ID] = true
		}
	}
	return used
}

// unusableResult is the error result of a call intake marked unusable
// (malformed arguments, or no usable tool name), and false for any other.
func unusableResult(c transcript.ToolCall) (tool.Result, bool) {
	var bad struct {
		Raw *string `json:"_malformed_arguments"`
		Why *string `json:"_unusable_call"`
	}
	if json.Unmarshal([]byte(c.Arguments), &bad) != nil {
		return tool.Result{}, false
	}
	switch {
	case bad.Raw != nil:
		return tool.Result{IsError: true, Content: fmt.Sprintf(
			"error: the arguments of this %s call were not a valid JSON object (got %q); call it again with valid JSON",
			c.Name, text.Clip(*bad.Raw, 200))}, true
	case c.Name == UnusableCallName && bad.Why != nil:
		return tool.Result{IsError: true, Content: "error: " + *bad.Why}, true
	}
	return tool.Result{}, false
}

// freshID returns base, or base with a suffix, that is not in used.
func freshID(used map[string]bool, base string) string {
	id := base
	for n := 2; used[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	return id
}
