// Package llm is the seam between the agent engine and a chat-completions
// model.
//
// The engine talks to a Model, which streams one chat-completions call and
// returns the assembled Response. OpenAI implements Model against any
// OpenAI-compatible backend (OpenAI, DeepSeek, vLLM, llama.cpp, Ollama,
// OpenRouter ...): it streams with usage reporting, captures reasoning
// text and prompt-cache statistics in both the DeepSeek and the OpenAI
// dialect, assembles streamed tool calls, and retries transient failures
// (HTTP 429 and 5xx, connection errors, streams cut before any output)
// with exponential backoff and full jitter, honouring Retry-After.
// A stream that ends without a finish_reason is treated as cut: it is
// retried when no output had been passed on yet and otherwise returned as
// an error wrapping ErrStreamCut, so a truncated answer is never mistaken
// for a complete one.
//
// No call can hang or grow without bound. Connecting, the wait for the
// first byte of an answer and every silence within a stream are bounded by
// Config timeouts; a call that runs into one fails with an error wrapping
// ErrTimeout and is retried under the same rule as a cut stream. What one
// reply may carry is capped while it streams (Config.MaxReplyBytes,
// Config.MaxToolCallBytes, MaxToolCalls, and limits on the raw stream
// derived from them): a reply that passes a cap is stopped at once, nothing
// past the cap is kept, and the call fails with an error wrapping
// ErrReplyTooLarge, which is not retried. Error answers are read up to
// 64 KiB.
//
// Errors are phrased for people: each says what went wrong and what to do,
// and never contains the API key. APIError carries the HTTP status and the
// server's message; IsContextLengthExceeded and IsRetryable classify any
// error returned by this package; errors.Is with ErrStreamCut,
// ErrUnreachable, ErrTimeout and ErrReplyTooLarge tells the failures
// apart.
//
// Func adapts a plain function to Model, which is convenient for fakes.
package llm

import (
	"context"
	"errors"
	"time"

	"github.com/tally-dev/tally/engine/chat"
)

// Model streams chat completions.
//
// Stream sends req and blocks until the answer is complete, the context is
// done or the call failed for good. Text is passed to cb.OnDelta as it
// arrives and retries are announced through cb.OnRetry, both on the
// goroutine that called Stream. On success the Response is non-nil and the
// error nil; on failure the Response is nil, except that a call stopped by
// its context may return the text streamed so far (see OpenAI.Stream).
type Model interface {
	Stream(ctx context.Context, req Request, cb Callbacks) (*Response, error)
}

// Func adapts an ordinary function to the Model interface.
type Func func(ctx context.Context, req Request, cb Callbacks) (*Response, error)

// Stream calls f. A nil Func returns an error instead of panicking.
func (f Func) Stream(ctx context.Context, req Request, cb Callbacks) (*Response, error) {
	if f == nil {
		return nil, errors.New("no model function is set; construct the llm.Func with a non-nil function")
	}
	return f(ctx, req, cb)
}

// Request is one chat-completions call.
type Request struct {
	// Model is the model name as the backend knows it.
	Model string
	// Messages are sent exactly as given, in order.
	Messages []chat.Message
	// Encoded holds cached encodings of Messages and Tools (see
	// Encodings), which the body then carries instead of encoding them
	// again. The zero value caches nothing. Either way the body carries
	// each message as chat.Encode writes it.
	Encoded Encodings
	// Tools are sent exactly in the given order.
	Tools []chat.Tool
	// CacheKey, when not empty, is sent as the body's top-level
	// "prompt_cache_key" (OpenAI's prompt-caching routing key), its last
	// member; empty sends no such member.
	CacheKey string
	// MaxTokens limits the completion; 0 means the field is not sent.
	MaxTokens int
	// Temperature is not sent when nil. A pointer to 0 sends
	// "temperature": 0.
	Temperature *float32
	// Effort is how much the model is asked to think, sent in the
	// dialect of the model's provider (see Effort, Dialect); empty asks
	// the Config's EffortSource, and sends nothing when it has no level.
	Effort Effort
	// Session and Role say who makes the request: the engine's session
	// ID and the kind of call ("" for a turn, "summary", "subagent" ...).
	// They are never sent; an EffortSource reads them, and Chain sends
	// Session as the prompt cache key of a fallback that takes one.
	Session, Role string
}

// ToolCall is one function call the model made.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the raw JSON argument text exactly as streamed. It may
	// be malformed; this package never validates it.
	Arguments string
}

// Response is a completed chat-completions call.
type Response struct {
	// Content is the assistant text.
	Content string
	// Reasoning is the reasoning text (DeepSeek reasoning_content or the
	// "reasoning" field some servers use).
	Reasoning string
	// ToolCalls are assembled from the stream deltas by index, in index
	// order.
	ToolCalls []ToolCall
	// FinishReason is the backend's finish_reason ("stop", "length",
	// "tool_calls" ...).
	FinishReason string
	// Usage is the reported token usage; it is meaningful only when
	// HasUsage is true.
	Usage    Usage
	HasUsage bool
	// Duration is the wall time of the successful attempt.
	Duration time.Duration
	// Attempts is the number of attempts made, including the successful
	// one (1 when the first attempt succeeded).
	Attempts int
	// Effort is the level the request was sent with (empty: none).
	Effort Effort
	// Model is the model that answered when a fallback of a Chain did,
	// "" when the model asked for answered. Fallback names the switch
	// this very call made, "old → new: why", on the one answer that
	// follows it (see Chain).
	Model, Fallback string
}

// Delta is a piece of streamed text. Either field may be empty.
type Delta struct {
	Content   string
	Reasoning string
}

// Retry describes a failed attempt that is about to be retried. It is
// published before the wait starts.
type Retry struct {
	// Attempt is the number of the attempt that will be made after the
	// wait (2 for the first retry); MaxAttempts is the configured limit.
	Attempt, MaxAttempts int
	// Wait is how long the model waits before that attempt.
	Wait time.Duration
	// Reason says in a few words why the previous attempt failed.
	Reason string
	// Status is the HTTP status of the failure, or 0 when there was none
	// (connection errors, cut streams).
	Status int
	// Fallback, when not empty, says that the request goes to the next
	// model of a Chain at once instead, "old → new" (Wait is 0).
	Fallback string
}

// Callbacks receive progress from Stream. Both are optional and are called
// on the goroutine running Stream, never concurrently.
type Callbacks struct {
	OnDelta func(Delta)
	OnRetry func(Retry)
}

func (cb Callbacks) delta(d Delta) {
	if cb.OnDelta != nil && (d.Content != "" || d.Reasoning != "") {
		cb.OnDelta(d)
	}
}

func (cb Callbacks) retry(r Retry) {
	if cb.OnRetry != nil {
		cb.OnRetry(r)
	}
}
