package llmtest

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Script decides how the server answers each accepted chat request.
//
// The server calls Reply once per request that passed validation (auth,
// model, message structure), one call at a time and in arrival order, so an
// implementation does not need its own locking. Requests rejected by
// validation never reach the script.
type Script interface {
	Reply(req *Req) Reply
}

// ScriptFunc adapts an ordinary function to the Script interface.
type ScriptFunc func(req *Req) Reply

// Reply calls f(req). A nil ScriptFunc answers with ExhaustedContent.
func (f ScriptFunc) Reply(req *Req) Reply {
	if f == nil {
		return Reply{Content: ExhaustedContent}
	}
	return f(req)
}

// ExhaustedContent is the text the server answers with when a Sequence has
// no replies left (or a nil Script was given). Tests can look for it to
// detect a client that made more calls than the script expected.
const ExhaustedContent = "llmtest: script exhausted"

// Sequence returns a Script that answers the Nth accepted request with the
// Nth reply. Once the replies run out every further request is answered
// with a plain text reply whose content is ExhaustedContent. A fault reply
// consumes its step like any other, so
//
//	Sequence(Reply{Fault: Fault429}, Reply{Content: "ok"})
//
// fails the first attempt and answers the retry with "ok".
func Sequence(replies ...Reply) Script {
	cp := make([]Reply, len(replies))
	copy(cp, replies)
	return &sequence{replies: cp}
}

type sequence struct {
	mu      sync.Mutex
	replies []Reply
	next    int
}

func (s *sequence) Reply(*Req) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.replies) {
		return Reply{Content: ExhaustedContent}
	}
	r := s.replies[s.next]
	s.next++
	return r
}

// Reply is one scripted answer.
type Reply struct {
	// Content is the assistant text.
	Content string
	// Reasoning is streamed as reasoning_content deltas before Content.
	Reasoning string
	// ToolCalls are streamed as tool call deltas after Content.
	ToolCalls []ToolCall
	// Fault, when not FaultNone, replaces the normal answer with a failure.
	Fault Fault
	// FinishReason overrides the finish_reason; by default it is
	// "tool_calls" when ToolCalls is non-empty and "stop" otherwise.
	FinishReason string
	// Delay is waited before the server starts answering. A client that
	// disconnects during the delay gets no answer.
	Delay time.Duration
	// PromptTokens, when positive, replaces the computed prompt_tokens in
	// the reported usage (cache hit tokens are capped to it).
	PromptTokens int
	// Usage, when set, is sent verbatim as the usage object instead of the
	// computed one, to play a broken or hostile server (negative counts,
	// impossible cache splits).
	Usage json.RawMessage

	panicked string // set by the server when the script panicked
}

// Text returns a Reply whose only content is s.
func Text(s string) Reply { return Reply{Content: s} }

// Call returns a Reply that makes a single tool call with a generated ID.
func Call(name, arguments string) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: arguments}}}
}

// ToolCall is one function call in a Reply or in a request message.
type ToolCall struct {
	// ID is the tool call id. In a Reply an empty ID is replaced by
	// "call_<request index>_<call index>".
	ID string
	// Name is the function name.
	Name string
	// Arguments is the raw JSON argument text, sent exactly as given.
	Arguments string
}

// Fault is a failure the server injects instead of a normal answer.
type Fault int

const (
	// FaultNone answers normally.
	FaultNone Fault = iota
	// Fault429 answers HTTP 429 with a Retry-After header (see WithRetryAfter).
	Fault429
	// Fault500 answers HTTP 500 with an OpenAI-style error body.
	Fault500
	// FaultDropStream answers HTTP 200, sends at most a role-only chunk and
	// then closes the connection before any content.
	FaultDropStream
	// FaultDropAfterContent answers HTTP 200, sends the first piece of the
	// reply's content (or of its first tool call, or "…" when the reply is
	// empty) and then closes the connection.
	FaultDropAfterContent
	// FaultContextLength answers HTTP 400 with an OpenAI-style
	// context_length_exceeded error body.
	FaultContextLength
)

// String returns the Go name of the fault.
func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "FaultNone"
	case Fault429:
		return "Fault429"
	case Fault500:
		return "Fault500"
	case FaultDropStream:
		return "FaultDropStream"
	case FaultDropAfterContent:
		return "FaultDropAfterContent"
	case FaultContextLength:
		return "FaultContextLength"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}
