package agent

import (
	"time"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
)

// What the model writes is redacted once, at intake, like tool output: its
// reply text and reasoning, and the arguments of its tool calls, as stored,
// shown and sent back on every later request. The log is append-only and
// byte-stable for the prompt cache, so the redacted copy is decided once
// and never rewritten. The tools themselves run with the model's own
// arguments (see intakeCalls): a file written keeps its bytes and a command
// runs as written.

// intakeReply returns the stored message of a reply, its text and
// reasoning redacted, with calls from intakeCalls (which redacted
// argsRedacted secrets), and the reply's text as stored.
func intakeReply(resp *llm.Response, calls []transcript.ToolCall, argsRedacted int, at time.Time) (transcript.Message, string) {
	content, n := secrets.Count(resp.Content)
	reasoning, m := secrets.Count(resp.Reasoning)
	reply := transcript.AssistantReply(content, reasoning, calls, at)
	reply.Redacted = n + m + argsRedacted
	return reply, content
}
