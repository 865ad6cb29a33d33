package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/tally-dev/tally/internal/text"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures an OpenAI-compatible backend.
type Config struct {
	// BaseURL is the API root, usually ending in /v1
	// (DefaultBaseURL when empty).
	BaseURL string
	// APIKey is sent as a bearer token when non-empty. It never appears in
	// an error message.
	APIKey string
	// HTTPClient is used for all requests (http.DefaultClient's settings
	// when nil). It should have no overall Timeout, since responses are
	// streamed; use the context and the timeouts below instead. Its
	// Transport is wrapped, never modified; an *http.Transport is cloned to
	// apply ConnectTimeout.
	HTTPClient *http.Client
	// ConnectTimeout bounds DNS, TCP connect and the TLS handshake, each
	// (DefaultConnectTimeout when 0, off when negative). It is applied
	// when the HTTPClient's Transport is nil or an *http.Transport; with
	// any other RoundTripper the connection is bounded only by
	// FirstByteTimeout.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait from sending a request to the first
	// byte of the answer's body, any byte: headers alone do not stop it,
	// while a keep-alive comment does (DefaultFirstByteTimeout when 0, off
	// when negative).
	FirstByteTimeout time.Duration
	// StreamIdleTimeout bounds the silence between two reads of the
	// answer's body once it started (DefaultStreamIdleTimeout when 0, off
	// when negative).
	//
	// A call that hits any of the three timeouts fails with an error
	// wrapping ErrTimeout; it is retried like a cut stream, that is only
	// when no output had been passed to OnDelta yet.
	StreamIdleTimeout time.Duration
	// MaxReplyBytes caps the text one reply may carry: content, reasoning
	// and every tool call's id, name and arguments together
	// (DefaultMaxReplyBytes when 0 or less; the cap cannot be turned off).
	// It also sets the limits on the raw stream: one line may hold at most
	// twice the cap plus 64 KiB, lines that carry no data at most the cap
	// in total, and the whole body at most 64 times the cap. A reply that
	// passes a cap is stopped at once and fails with an error wrapping
	// ErrReplyTooLarge; nothing past the cap is kept.
	MaxReplyBytes int
	// MaxToolCallBytes caps the arguments of one tool call
	// (DefaultMaxToolCallBytes when 0 or less).
	MaxToolCallBytes int
	// MaxAttempts is the total number of attempts per call, including the
	// first (DefaultMaxAttempts when 0 or less).
	MaxAttempts int
	// BaseDelay is the backoff ceiling after the first failure; it doubles
	// per failure up to MaxDelay (defaults DefaultBaseDelay and
	// DefaultMaxDelay). MaxDelay is also the longest Retry-After that is
	// honoured: a server asking for a longer wait fails the call.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// Dialect is how the provider takes a request's Effort (DialectFor
	// the BaseURL when empty).
	Dialect Dialect
	// Efforts, when set, gives the effort of a request that names none.
	Efforts EffortSource
	// Sleep waits between attempts. It must return early with ctx.Err()
	// when ctx is done. Nil means a real timer; tests substitute a
	// function that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c Config) withDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = DefaultBaseDelay
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.MaxDelay < c.BaseDelay {
		c.MaxDelay = c.BaseDelay
	}
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	if c.Dialect == "" {
		c.Dialect = DialectFor(c.BaseURL)
	}
	c.ConnectTimeout = timeoutOrDefault(c.ConnectTimeout, DefaultConnectTimeout)
	c.FirstByteTimeout = timeoutOrDefault(c.FirstByteTimeout, DefaultFirstByteTimeout)
	c.StreamIdleTimeout = timeoutOrDefault(c.StreamIdleTimeout, DefaultStreamIdleTimeout)
	if c.MaxReplyBytes <= 0 {
		c.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if c.MaxToolCallBytes <= 0 {
		c.MaxToolCallBytes = DefaultMaxToolCallBytes
	}
	return c
}

// replyLimits returns the size caps of a Config that went through
// withDefaults.
func (c Config) replyLimits() replyLimits {
	return replyLimits{reply: c.MaxReplyBytes, call: c.MaxToolCallBytes}
}

// OpenAI is a Model backed by an OpenAI-compatible chat-completions API. It
// is safe for concurrent use.
type OpenAI struct {
	cfg     Config
	client  *openai.Client
	host    string
	urlErr  error
	rand    func() float64
	nowFunc func() time.Time
}

var _ Model = (*OpenAI)(nil)

// NewOpenAI returns a Model for the backend described by cfg. It does not
// contact the server; an unusable BaseURL is reported by every Stream call.
func NewOpenAI(cfg Config) *OpenAI {
	cfg = cfg.withDefaults()
	o := &OpenAI{cfg: cfg, rand: defaultRand, nowFunc: time.Now}
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		o.urlErr = fmt.Errorf("the base URL %q is not a valid http(s) URL; enter it like https://api.example.com/v1", redact(cfg.BaseURL, cfg.APIKey))
	default:
		o.host = u.Host
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	oc.HTTPClient = wrapClient(guardedClient(cfg.HTTPClient, cfg))
	o.client = openai.NewClientWithConfig(oc)
	return o
}

// Stream implements Model. Transient failures are retried as described in
// the package documentation; each retry is announced through cb.OnRetry
// before the wait. When ctx is done Stream returns promptly with an error
// wrapping ctx.Err() and, when the answer had begun, a Response holding
// the text and reasoning streamed so far (never its tool calls), so a
// stopped answer can be kept as the user saw it; otherwise an error comes
// with a nil Response.
func (o *OpenAI) Stream(ctx context.Context, req Request, cb Callbacks) (*Response, error) {
	resp, err := o.stream(ctx, req, cb)
	if err != nil {
		if ctx.Err() == nil {
			resp = nil
		}
		return resp, guardKey(err, o.cfg.APIKey)
	}
	return resp, nil
}

func (o *OpenAI) stream(ctx context.Context, req Request, cb Callbacks) (*Response, error) {
	if o.urlErr != nil {
		return nil, o.urlErr
	}
	creq, tempZero, err := req.chatRequest()
	if err != nil {
		return nil, err
	}
	creq, plan, err := req.assembly(creq, tempZero)
	if err != nil {
		return nil, err
	}
	if req.Effort == EffortDefault && o.cfg.Efforts != nil {
		req.Effort = o.cfg.Efforts.Effort(req.Session, req.Role)
	}
	plan.extra = applyEffort(&creq, o.cfg.Dialect, req.Effort)
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil, cancelled(ctx)
		}
		start := time.Now()
		resp, err := o.attempt(ctx, creq, plan, cb)
		if err == nil {
			resp.Duration = time.Since(start)
			resp.Attempts, resp.Effort = attempt, req.Effort
			return resp, nil
		}
		if ctx.Err() != nil {
			return resp, cancelled(ctx) // what was streamed before the stop, if anything
		}
		if !IsRetryable(err) {
			return nil, err
		}
		if attempt >= o.cfg.MaxAttempts {
			if attempt == 1 {
				return nil, err
			}
			return nil, &exhaustedError{attempts: attempt, last: err}
		}
		wait := backoff(attempt, o.cfg.BaseDelay, o.cfg.MaxDelay, o.rand)
		var api *APIError
		if errors.As(err, &api) && api.RetryAfter > 0 {
			if api.RetryAfter > o.cfg.MaxDelay {
				return nil, fmt.Errorf("the server asked to wait %s before retrying, longer than the %s limit; try again later (%s): %w",
					api.RetryAfter, o.cfg.MaxDelay, api.Error(), tooLong{api})
			}
			wait = api.RetryAfter
		}
		reason, status := retryReason(err)
		cb.retry(Retry{Attempt: attempt + 1, MaxAttempts: o.cfg.MaxAttempts, Wait: wait, Reason: reason, Status: status})
		if err := o.cfg.Sleep(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return nil, cancelled(ctx)
			}
			return nil, fmt.Errorf("waiting before the next attempt failed: %w", err)
		}
	}
}

// tooLong wraps an APIError whose Retry-After exceeded MaxDelay, keeping it
// reachable for errors.As without repeating its text.
type tooLong struct{ api *APIError }

func (t tooLong) Error() string { return "retry wait too long" }
func (t tooLong) Unwrap() error { return t.api }

// cancelled is the error for a call stopped by its context.
func cancelled(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the request timed out before the model finished: %w", ctx.Err())
	}
	return fmt.Errorf("the request was cancelled: %w", ctx.Err())
}

// attempt makes one streaming call.
func (o *OpenAI) attempt(ctx context.Context, creq openai.ChatCompletionRequest, plan *body, cb Callbacks) (*Response, error) {
	info := &attemptInfo{body: plan}
	actx, cancel := context.WithCancel(withAttempt(ctx, info))
	defer cancel()
	stream, err := o.client.CreateChatCompletionStream(actx, creq)
	if err != nil {
		return nil, o.classify(err, info, creq.Model)
	}
	defer func() { _ = stream.Close() }()
	a := newAssembler(o.cfg.replyLimits())
	for {
		raw, err := stream.RecvRaw()
		var te *timeoutError
		var tl *tooLargeError
		switch {
		case err == nil:
			if err := a.add(raw, cb, o.cfg.APIKey); err != nil {
				return nil, err
			}
			continue
		case ctx.Err() != nil:
			return a.partial(), ctx.Err()
		case a.finish != "":
			// The answer was complete; at most the usage chunk was lost.
			return a.response(), nil
		case errors.Is(err, io.EOF):
			return nil, &cutError{shown: a.shown}
		case errors.As(err, &te):
			return nil, te.at(o.host, a.shown)
		case errors.As(err, &tl):
			return nil, tl
		}
		var oe *openai.APIError
		if errors.As(err, &oe) {
			// An error object sent inside the stream.
			return nil, o.apiError(0, oe.Message, oe.Code, oe.Type, creq.Model, nil)
		}
		return nil, &cutError{shown: a.shown, cause: err}
	}
}

// classify turns an error from go-openai into one of this package's errors.
func (o *OpenAI) classify(err error, info *attemptInfo, model string) error {
	var oe *openai.APIError
	var re *openai.RequestError
	var ue *url.Error
	var te *timeoutError
	var ae *assemblyError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &te):
		return te.at(o.host, false)
	case errors.As(err, &oe):
		return o.apiError(oe.HTTPStatusCode, oe.Message, oe.Code, oe.Type, model, info.header)
	case errors.As(err, &re):
		// Redact before shortening, so a key cut in half cannot show.
		return o.apiError(re.HTTPStatusCode, bodyMessage([]byte(redact(string(re.Body), o.cfg.APIKey))), nil, "", model, info.header)
	case errors.As(err, &ue):
		return &unreachableError{host: o.host, cause: err, text: redact(ue.Err.Error(), o.cfg.APIKey)}
	}
	return fmt.Errorf("the request could not be sent (%s); check the model name and request settings", redact(err.Error(), o.cfg.APIKey))
}

func (o *OpenAI) apiError(status int, msg string, code any, typ, model string, h http.Header) *APIError {
	e := &APIError{Status: status, Message: text.OneLine(redact(msg, o.cfg.APIKey), errorDetailRunes), Type: typ, Model: model}
	switch c := code.(type) {
	case string:
		e.Code = c
	case nil:
	default:
		e.Code = fmt.Sprint(c)
	}
	if h != nil {
		if d, ok := parseRetryAfter(h, o.nowFunc()); ok {
			e.RetryAfter = d
		}
	}
	return e
}

// bodyMessage extracts a readable message from a non-JSON or unusual error
// body, shortened to one line of at most 300 characters.
func bodyMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var s string
		switch {
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case v.Detail != "":
			return v.Detail
		}
	}
	return text.OneLine(string(body), errorDetailRunes)
}

// errorDetailRunes bounds the server text quoted in an error message.
const errorDetailRunes = 300
