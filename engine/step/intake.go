package step

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

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

// IntakeCalls turns the calls of one reply into transcript calls a strict
// server will accept when they are replayed, for any log (a session's or a
// sub-agent's): every call gets an id that is unique in the log (a
// missing or repeated id is replaced by prefix_<index> made unique; used
// holds the ids the log already has), a name the API accepts (an unusable
// one is replaced by UnusableCallName with the reason in the arguments),
// and normalised arguments (see normalizeArgs) with their secrets
// redacted (see secrets.JSONStrings). It also returns, by call id, the
// arguments each tool runs with (the model's own text, which redaction
// and neutralising never change) and how many secrets it redacted.
func IntakeCalls(in []llm.ToolCall, used map[string]bool, prefix string) ([]transcript.ToolCall, map[string]string, int) {
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

// IDsOf returns the tool call ids a log holds.
func IDsOf(log *transcript.AppendLog) map[string]bool {
	used := map[string]bool{}
	for i := range log.Len() {
		for _, c := range log.At(i).Msg.ToolCalls {
			used[c.ID] = true
		}
	}
	return used
}

// Unusable is the error result of a call intake marked unusable
// (malformed arguments, or no usable tool name), and false for any other.
func Unusable(c transcript.ToolCall) (tool.Result, bool) {
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

// normalizeArgs makes the stored arguments text safe to send back: empty
// becomes {}, text that is not a JSON object is kept verbatim but wrapped
// so strict servers accept the replayed call, and engine tags are
// neutralised (the replacement keeps valid JSON valid), so replaying the
// call can never open or close an engine block.
func normalizeArgs(a string) string {
	t := strings.TrimSpace(a)
	if t == "" {
		return "{}"
	}
	var v map[string]any
	if json.Unmarshal([]byte(t), &v) == nil {
		return transcript.Neutralize(a)
	}
	b, _ := json.Marshal(map[string]string{"_malformed_arguments": transcript.Neutralize(a)})
	return string(b)
}

// Why a conversation's loop ended: the reasons of a turn's and a
// sub-agent's end.
const (
	ReasonDone      = "done"       // the model answered without tool calls
	ReasonStepLimit = "step_limit" // the per-turn step limit was reached
	ReasonCancelled = "cancelled"  // the user stopped the turn
	ReasonFailed    = "failed"     // an error ended the turn
	ReasonHalted    = "halted"     // the loop guard stopped the turn
)

// What the model writes is redacted once, at intake, like tool output: its
// reply text and reasoning, and the arguments of its tool calls, as stored,
// shown and sent back on every later request. The log is append-only and
// byte-stable for the prompt cache, so the redacted copy is decided once
// and never rewritten. The tools themselves run with the model's own
// arguments (see IntakeCalls): a file written keeps its bytes and a command
// runs as written.

// Reply returns the stored message of a reply, its text and
// reasoning redacted, with calls from IntakeCalls (which redacted
// argsRedacted secrets), and the reply's text as stored.
func Reply(resp *llm.Response, calls []transcript.ToolCall, argsRedacted int, at time.Time) (transcript.Message, string) {
	content, n := secrets.Count(resp.Content)
	reasoning, m := secrets.Count(resp.Reasoning)
	reply := transcript.AssistantReply(content, reasoning, calls, at)
	reply.Redacted = n + m + argsRedacted
	return reply, content
}
