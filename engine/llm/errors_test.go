package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestIsContextLengthExceeded(t *testing.T) {
	for _, msg := range []string{
		"This model's maximum context length is 8192 tokens.",
		"the request exceeds the available context length",
		"error code: context_length_exceeded",
		"Too many tokens in prompt",
		"prompt is too long: 250000 tokens > 200000 maximum",
		"input exceeds the context window",
	} {
		if !IsContextLengthExceeded(&APIError{Status: 400, Message: msg}) {
			t.Errorf("not recognised: %q", msg)
		}
	}
	if !IsContextLengthExceeded(&APIError{Status: 400, Message: "nope", Code: "context_length_exceeded"}) {
		t.Errorf("code not recognised")
	}
	if IsContextLengthExceeded(&APIError{Status: 400, Message: "invalid tool schema"}) || IsContextLengthExceeded(nil) {
		t.Errorf("false positive")
	}
}

func TestIsRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&APIError{Status: 429}, true},
		{&APIError{Status: 500}, true},
		{&APIError{Status: 503}, true},
		{&APIError{Status: 501}, false},
		{&APIError{Status: 400}, false},
		{&APIError{Status: 401}, false},
		{&APIError{Status: 0, Message: "mid-stream"}, false},
		{&cutError{shown: false, cause: io.ErrUnexpectedEOF}, true},
		{&cutError{shown: true, cause: io.ErrUnexpectedEOF}, false},
		{&unreachableError{host: "h", cause: errors.New("refused"), text: "refused"}, true},
		{&exhaustedError{attempts: 5, last: &APIError{Status: 500}}, true},
		{&timeoutError{phase: phaseConnect}, true},
		{&timeoutError{phase: phaseFirstByte}, true},
		{&timeoutError{phase: phaseIdle}, true},
		{&timeoutError{phase: phaseIdle, shown: true}, false},
		{&exhaustedError{attempts: 2, last: &timeoutError{phase: phaseIdle}}, true},
		{&tooLargeError{what: "x"}, false},
		{fmt.Errorf("wrapped: %w", &tooLargeError{what: "x", server: true}), false},
		{fmt.Errorf("llm: x: %w", context.Canceled), false},
		{errors.New("other"), false},
	} {
		if got := IsRetryable(tc.err); got != tc.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestErrorTexts(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&APIError{Status: 400, Message: "bad thing"}, "the server rejected the request (HTTP 400): bad thing"},
		{&APIError{Status: 401, Message: "Incorrect API key provided: sk-abc"}, "the server rejected the API key (HTTP 401); check the API key in the connection settings"},
		{&APIError{Status: 404, Code: "model_not_found", Model: "gpt-x", Message: "nope"}, `the server does not know the model "gpt-x" (HTTP 404); check the model name: nope`},
		{&APIError{Status: 404, Message: "404 page not found"}, "the server has no chat-completions endpoint at this address (HTTP 404); check the base URL, which usually ends in /v1: 404 page not found"},
		{&unreachableError{host: "example.invalid", text: "no such host"}, "cannot reach example.invalid: no such host; check the base URL and the network connection"},
		{&exhaustedError{attempts: 3, last: &APIError{Status: 500, Message: "x"}}, "gave up after 3 attempts; the last one failed: the server failed to answer (HTTP 500); try again later: x"},
		{&timeoutError{phase: phaseConnect, limit: 15 * time.Second, host: "api.example.com"}, "could not connect to api.example.com within 15s (connect timeout); check the base URL and the network, or raise the timeout in Settings"},
		{&timeoutError{phase: phaseFirstByte, limit: 3 * time.Minute}, "the server sent nothing for 180s after the request (first-byte timeout); check the server or raise the timeout in Settings"},
		{&timeoutError{phase: phaseIdle, limit: 90 * time.Second}, "the server sent nothing for 90s (stream idle timeout); check the server or raise the timeout in Settings"},
		{&timeoutError{phase: phaseIdle}, "the server sent nothing (stream idle timeout); check the server or raise the timeout in Settings"},
		{&tooLargeError{what: "the server sent more than 64 MiB for it", server: true}, "the reply was stopped because the server sent more than 64 MiB for it; check that the base URL points to a well-behaved OpenAI-compatible server"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	if !errors.Is(&cutError{shown: true}, ErrStreamCut) || !strings.HasPrefix((&cutError{}).Error(), "the response stream was cut off") {
		t.Errorf("cutError does not wrap ErrStreamCut")
	}
	if te := (&timeoutError{phase: phaseConnect, cause: io.EOF}); !errors.Is(te, ErrTimeout) || !errors.Is(te, ErrUnreachable) || !errors.Is(te, io.EOF) || errors.Is(te, ErrStreamCut) {
		t.Errorf("connect timeout chain broken")
	}
	if te := (&timeoutError{phase: phaseIdle}); !errors.Is(te, ErrTimeout) || !errors.Is(te, ErrStreamCut) || errors.Is(te, ErrUnreachable) {
		t.Errorf("idle timeout chain broken")
	}
	if !errors.Is(&tooLargeError{}, ErrReplyTooLarge) {
		t.Errorf("tooLargeError does not wrap ErrReplyTooLarge")
	}
	if !errors.Is(&unreachableError{cause: io.EOF}, ErrUnreachable) || !errors.Is(&unreachableError{cause: io.EOF}, io.EOF) {
		t.Errorf("unreachableError chain broken")
	}
}

func TestGuardKey(t *testing.T) {
	inner := &APIError{Status: 400, Message: "token sk-1 invalid"}
	err := guardKey(fmt.Errorf("wrapped: %w", inner), "sk-1")
	if strings.Contains(err.Error(), "sk-1") {
		t.Errorf("key leaked: %v", err)
	}
	var api *APIError
	if !errors.As(err, &api) {
		t.Errorf("chain lost")
	}
	if plain := errors.New("x"); guardKey(plain, "sk-1") != plain {
		t.Errorf("error without key was wrapped")
	}
}
