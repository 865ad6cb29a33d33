package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrStreamCut is wrapped by errors for a response stream that ended before
// the backend finished its answer. When output had already been passed to
// OnDelta the call is not retried (the text was shown), and the error is
// returned to the caller.
var ErrStreamCut = errors.New("the response stream was cut off before the answer was complete")

// ErrUnreachable is wrapped by errors for a backend that could not be
// connected to at all (DNS failure, refused connection, TLS failure ...).
var ErrUnreachable = errors.New("the server could not be reached")

// ErrTimeout is wrapped by errors for a server that kept the call waiting
// longer than one of the Config timeouts: connecting (those errors also
// match ErrUnreachable), the first byte of the answer, or the silence
// between two parts of a stream (those also match ErrStreamCut). Like a cut
// stream, a timeout is retried only while no output had been passed on.
var ErrTimeout = errors.New("the server did not answer in time")

// ErrReplyTooLarge is wrapped by errors for a reply stopped because it
// passed one of the size caps (Config.MaxReplyBytes,
// Config.MaxToolCallBytes, MaxToolCalls, or the limits on the raw stream
// derived from MaxReplyBytes). The stream is closed at once and nothing
// past the cap is kept. It is not retried: the same request tends to make
// a model run away the same way again, and each retry would cost a full
// cap's worth of output.
var ErrReplyTooLarge = errors.New("the reply was too large")

// APIError is an error answer from the backend.
type APIError struct {
	// Status is the HTTP status code; 0 for an error sent inside an
	// otherwise successful stream.
	Status int
	// Message is the server's own explanation, with the API key removed.
	Message string
	// Code and Type are the OpenAI-style error code and type, when given.
	Code string
	Type string
	// Model is the requested model, used to phrase model-not-found errors.
	Model string
	// RetryAfter is the wait the server asked for in a Retry-After (or
	// retry-after-ms) header, or 0 when it sent none.
	RetryAfter time.Duration
}

// Error returns one sentence saying what the server did and, where there is
// one, what to do about it.
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no reason was given"
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fmt.Sprintf("the server rejected the API key (HTTP %d); check the API key in the connection settings", e.Status)
	case e.Status == http.StatusNotFound && e.modelNotFound():
		return fmt.Sprintf("the server does not know the model %q (HTTP 404); check the model name: %s", e.Model, msg)
	case e.Status == http.StatusNotFound:
		return fmt.Sprintf("the server has no chat-completions endpoint at this address (HTTP 404); check the base URL, which usually ends in /v1: %s", msg)
	case e.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("the server is rate limiting requests (HTTP 429); wait a little and try again: %s", msg)
	case e.Status >= 500:
		return fmt.Sprintf("the server failed to answer (HTTP %d); try again later: %s", e.Status, msg)
	case e.Status == 0:
		return fmt.Sprintf("the server reported an error during the response: %s", msg)
	}
	return fmt.Sprintf("the server rejected the request (HTTP %d): %s", e.Status, msg)
}

func (e *APIError) modelNotFound() bool {
	if e.Code == "model_not_found" {
		return true
	}
	m := strings.ToLower(e.Message)
	if !strings.Contains(m, "model") {
		return false
	}
	for _, p := range []string{"not found", "does not exist", "not exist", "unknown model", "no such model", "not available", "invalid model"} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// retryable reports whether the status is worth retrying.
func (e *APIError) retryable() bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusRequestTimeout:
		return true
	case e.Status >= 500 && e.Status != http.StatusNotImplemented && e.Status != http.StatusHTTPVersionNotSupported:
		return true
	}
	return false
}

// contextPhrases are the ways backends say a prompt is too long.
var contextPhrases = []string{
	"context length",
	"maximum context length",
	"context_length_exceeded",
	"too many tokens",
	"prompt is too long",
	"context window",
}

// IsContextLengthExceeded reports whether err says the prompt did not fit
// the model's context window, in any of the common phrasings.
func IsContextLengthExceeded(err error) bool {
	if err == nil {
		return false
	}
	var api *APIError
	if errors.As(err, &api) && api.Code == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(err.Error())
	for _, p := range contextPhrases {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// IsRetryable reports whether err is a transient failure worth trying again
// later: HTTP 408, 429 and 5xx, an unreachable server, or a stream cut or
// timed out before any output. Cancellation, a stream cut or stalled after
// output, a reply too large and every other rejection are not retryable.
func IsRetryable(err error) bool {
	var te *timeoutError
	if errors.As(err, &te) {
		return !te.shown
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrReplyTooLarge) {
		return false
	}
	var cut *cutError
	if errors.As(err, &cut) {
		return !cut.shown
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.retryable() && api.Status != 0
	}
	return errors.Is(err, ErrUnreachable)
}

// IsUnauthorized reports whether err is the backend rejecting the API key
// (HTTP 401 or 403).
func IsUnauthorized(err error) bool {
	var api *APIError
	return errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden)
}

// IsModelNotFound reports whether err is the backend saying it does not
// know the requested model.
func IsModelNotFound(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status == http.StatusNotFound && api.modelNotFound()
}

// cutError is a stream that ended early.
type cutError struct {
	shown bool  // output was already passed to OnDelta
	cause error // the read error, or nil for a clean end without finish
}

func (e *cutError) Error() string {
	what := "the connection dropped"
	if e.cause == nil {
		what = "the server ended the stream without a finish reason"
	}
	if e.shown {
		return fmt.Sprintf("the response stream was cut off after part of the answer was shown (%s); send the request again to get a complete answer", what)
	}
	return fmt.Sprintf("the response stream was cut off before any output (%s); check the server's health and try again", what)
}

func (e *cutError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrStreamCut}
	}
	return []error{ErrStreamCut, e.cause}
}

// unreachableError is a failure to connect to the backend.
type unreachableError struct {
	host  string
	cause error
	text  string // cause text with the API key removed
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s: %s; check the base URL and the network connection", e.host, e.text)
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.cause} }

// exhaustedError is the last failure after all attempts were used.
type exhaustedError struct {
	attempts int
	last     error
}

func (e *exhaustedError) Error() string {
	return fmt.Sprintf("gave up after %d attempts; the last one failed: %s", e.attempts, e.last.Error())
}

func (e *exhaustedError) Unwrap() error { return e.last }

// redactedError hides the API key in the text of an error while keeping
// its chain for errors.Is and errors.As.
type redactedError struct {
	err error
	key string
}

func (e *redactedError) Error() string { return redact(e.err.Error(), e.key) }

func (e *redactedError) Unwrap() error { return e.err }

// redact removes every occurrence of key from s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// guardKey makes sure the API key never appears in err's text.
func guardKey(err error, key string) error {
	if err == nil || key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return &redactedError{err: err, key: key}
}
