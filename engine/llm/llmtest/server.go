package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// Server is a scripted OpenAI-compatible chat-completions server listening
// on a local port. All methods are safe for concurrent use.
type Server struct {
	ts     *httptest.Server
	script Script
	cfg    config

	scriptMu sync.Mutex // serializes script calls
	steps    int        // script replies produced so far (under scriptMu)

	mu        sync.Mutex
	records   []Recorded
	caches    map[string]*promptCache
	units     map[string]*unitCache // under CacheUnits
	resetNext bool

	closing   chan struct{} // closed by Close, ends stalled answers
	closeOnce sync.Once
}

type config struct {
	template     string
	retryAfter   int
	cacheUnit    int
	cacheRule    CacheRule
	unitInterval int
	models       []string
	apiKey       string
	usage        UsageFields
	lenient      bool // accept two user messages in a row
	window       int  // the context window /props and the models' meta say; 0: neither
}

// Option configures a Server.
type Option func(*config)

// WithTemplate selects the chat template used to render prompts:
// TemplateQwen35 (the default), TemplateDeepSeekV4 or TemplatePlain. An
// unknown name makes every chat request fail with HTTP 500 naming it.
func WithTemplate(name string) Option { return func(c *config) { c.template = name } }

// WithRetryAfter sets the Retry-After header value, in seconds, sent with
// Fault429 (default 1). A negative value omits the header.
func WithRetryAfter(seconds int) Option { return func(c *config) { c.retryAfter = seconds } }

// WithCacheUnit sets the prefix-cache granularity of CacheLCP in tokens
// (default 64). Values below 1 are treated as 1. CacheUnits ignores it.
func WithCacheUnit(n int) Option {
	return func(c *config) { c.cacheUnit = max(n, 1) }
}

// WithModels restricts the accepted model names; any other model is
// answered with HTTP 404 model_not_found. By default every model is
// accepted.
func WithModels(models []string) Option {
	return func(c *config) { c.models = slices.Clone(models) }
}

// WithConsecutiveUsers makes the server accept two user messages in a
// row. By default it rejects them with HTTP 400, as DeepSeek's reasoner
// and the strictly alternating chat templates (Gemma, Mistral) do.
func WithConsecutiveUsers() Option { return func(c *config) { c.lenient = true } }

// WithAPIKey makes the server require "Authorization: Bearer <key>"; any
// other value is answered with HTTP 401. By default any key is accepted.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// UsageFields selects which prompt-cache fields the reported usage carries.
type UsageFields int

const (
	// UsageDeepSeek reports prompt_cache_hit_tokens and
	// prompt_cache_miss_tokens.
	UsageDeepSeek UsageFields = 1 << iota
	// UsageOpenAI reports prompt_tokens_details.cached_tokens.
	UsageOpenAI
	// UsageNoCache reports no cache fields at all.
	UsageNoCache UsageFields = 0
)

// WithUsageFields selects the cache fields in the reported usage (default
// UsageDeepSeek|UsageOpenAI). Hit and miss are computed and recorded either
// way.
func WithUsageFields(f UsageFields) Option { return func(c *config) { c.usage = f } }

// New starts a server answering chat requests from script. A nil script
// answers every request with ExhaustedContent. Call Close when done.
func New(script Script, opts ...Option) *Server {
	cfg := config{template: TemplateQwen35, retryAfter: 1, cacheUnit: 64, unitInterval: DefaultUnitInterval, usage: UsageDeepSeek | UsageOpenAI}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if script == nil {
		script = ScriptFunc(nil)
	}
	s := &Server{script: script, cfg: cfg, caches: map[string]*promptCache{}, closing: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.handleChat)
	mux.HandleFunc("/v1/models", s.handleModels)
	mux.HandleFunc("/props", s.handleProps)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url",
			fmt.Sprintf("Unknown request URL: %s %s. Please check the URL for typos.", r.Method, r.URL.Path))
	})
	s.ts = httptest.NewServer(mux)
	return s
}

// URL returns the base URL to give an OpenAI client; it ends in "/v1".
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close shuts the server down and waits for in-flight requests to finish;
// stalled answers (FaultStall and the like) end at once.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.ts.Close()
}

// Recorded is one chat request the server received, with how it answered.
type Recorded struct {
	// Index is the position in arrival order (0-based).
	Index int
	// Status is the HTTP status the server answered with (200 for the drop
	// faults, which fail after the status line).
	Status int
	// Error is the error message sent for a non-200 answer.
	Error string
	// Invalid reports that the request was rejected by validation (bad
	// JSON, auth, unknown model, message structure) rather than by an
	// injected fault.
	Invalid bool
	// Fault is the injected fault, if any.
	Fault Fault
	// Body is the raw request body.
	Body []byte
	// Model, Messages, Tools, MaxTokens, Temperature and Stream are the
	// parsed request (empty when the body was not valid JSON).
	Model       string
	Messages    []Message
	Tools       []string
	MaxTokens   int
	Temperature *float64
	Stream      bool
	// Rendered is the rendered prompt text, Template the template that
	// produced it (TemplatePlain for the fallback).
	Rendered string
	Template string
	// FellBack reports that the chosen template failed and the plain
	// rendering was used; RenderError says why.
	FellBack    bool
	RenderError string
	// Prompt, Completion, Hit and Miss are the token counts reported in
	// usage (zero when the request got no answer body).
	Prompt, Completion, Hit, Miss int
	// Ideal is the cache hit a perfect append-only client would get; see
	// Stats.
	Ideal int
	// Reply is the script reply, when the script was consulted.
	Reply *Reply
}

// Stats are totals over all requests received so far.
type Stats struct {
	// Requests counts every chat request; Accepted those answered with
	// HTTP 200 (including the drop faults, whose prompts were processed);
	// Invalid those rejected by validation; Faults those that got an
	// injected fault.
	Requests, Accepted, Invalid, Faults int
	// Prompt, Completion, Hit and Miss sum the per-request token counts.
	Prompt, Completion, Hit, Miss int
	// Ideal sums the per-request ideal hits.
	//
	// Under CacheLCP, Ideal for a request is floor(len(P), unit) where P is
	// the rendered prompt tokens of the previous accepted request for the
	// same model. Under CacheUnits it is the length of that request's
	// input+output unit (its prompt followed by its rendered reply), capped
	// at this request's prompt tokens. Either way it is 0 for the first
	// request of a model and for the request following MarkReset. That is
	// the hit a perfect client would get if it only ever appended to the
	// previous prompt (and, under CacheUnits, to the reply), whatever this
	// client actually sent, so Hit/Ideal measures how close the client
	// comes to that.
	Ideal int
}

// Requests returns a copy of every chat request received, in arrival order,
// including rejected ones.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.records))
	copy(out, s.records)
	return out
}

// Invalid returns the requests rejected by validation (see
// Recorded.Invalid), so a test can assert that the client never sent a
// malformed request.
func (s *Server) Invalid() []Recorded {
	var out []Recorded
	for _, r := range s.Requests() {
		if r.Invalid {
			out = append(out, r)
		}
	}
	return out
}

// Stats returns totals over the requests received so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Stats
	st.Requests = len(s.records)
	for _, r := range s.records {
		if r.Invalid {
			st.Invalid++
		}
		if r.Fault != FaultNone {
			st.Faults++
		}
		if r.Status == http.StatusOK {
			st.Accepted++
		}
		st.Prompt += r.Prompt
		st.Completion += r.Completion
		st.Hit += r.Hit
		st.Miss += r.Miss
		st.Ideal += r.Ideal
	}
	return st
}

// MarkReset declares that the next accepted request is expected to start a
// fresh prompt (for example after the client compacted its history), so
// its ideal hit is 0.
func (s *Server) MarkReset() {
	s.mu.Lock()
	s.resetNext = true
	s.mu.Unlock()
}

func (s *Server) begin(body []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, Recorded{Index: len(s.records), Body: body})
	return len(s.records) - 1
}

func (s *Server) store(rec Recorded) {
	s.mu.Lock()
	s.records[rec.Index] = rec
	s.mu.Unlock()
}

func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.apiKey == "" {
		return true
	}
	return r.Header.Get("Authorization") == "Bearer "+s.cfg.apiKey
}

const authMessage = "Incorrect API key provided. You can find your API key in your account settings."

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "Only GET is supported on /v1/models.")
		return
	}
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", authMessage)
		return
	}
	models := s.cfg.models
	if len(models) == 0 {
		models = []string{"llmtest"}
	}
	type model struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		OwnedBy string     `json:"owned_by"`
		Meta    *modelMeta `json:"meta,omitempty"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, m := range models {
		list.Data = append(list.Data, model{ID: m, Object: "model", Created: created, OwnedBy: "llmtest", Meta: s.meta()})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Recorded{Index: s.begin(body), Body: body}
	reject := func(status int, typ, code, msg string, invalid bool) {
		rec.Status, rec.Error, rec.Invalid = status, msg, invalid
		s.store(rec)
		writeError(w, status, typ, code, msg)
	}
	if r.Method != http.MethodPost {
		reject(http.StatusMethodNotAllowed, "invalid_request_error", "", "Only POST is supported on /v1/chat/completions.", true)
		return
	}
	if readErr != nil {
		reject(http.StatusBadRequest, "invalid_request_error", "", "The request body could not be read.", true)
		return
	}
	if !s.authorized(r) {
		reject(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", authMessage, true)
		return
	}
	if s.cfg.template != TemplateQwen35 && s.cfg.template != TemplateDeepSeekV4 && s.cfg.template != TemplatePlain {
		reject(http.StatusInternalServerError, "server_error", "",
			fmt.Sprintf("llmtest: unknown template %q; use %q, %q or %q.", s.cfg.template, TemplateQwen35, TemplateDeepSeekV4, TemplatePlain), false)
		return
	}
	if !s.cfg.cacheRule.valid() {
		reject(http.StatusInternalServerError, "server_error", "", ruleError(s.cfg.cacheRule), false)
		return
	}
	p, err := parseRequest(body)
	if err != nil {
		reject(http.StatusBadRequest, "invalid_request_error", "", err.Error(), true)
		return
	}
	req := p.req
	req.Index = rec.Index
	rec.Model, rec.Messages, rec.Tools = req.Model, req.Messages, req.Tools
	rec.MaxTokens, rec.Temperature, rec.Stream = req.MaxTokens, req.Temperature, req.Stream
	if req.Model == "" {
		reject(http.StatusBadRequest, "invalid_request_error", "", "You must provide a model parameter.", true)
		return
	}
	if len(s.cfg.models) > 0 && !slices.Contains(s.cfg.models, req.Model) {
		reject(http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model), true)
		return
	}

	rd := render(s.cfg.template, p)
	rec.Rendered, rec.Template, rec.FellBack, rec.RenderError = rd.text, rd.template, rd.fellBack, rd.err
	if rd.refusal != "" {
		reject(http.StatusBadRequest, "invalid_request_error", "", rd.refusal, true)
		return
	}
	msg := validate(req.Messages)
	if msg == "" && !s.cfg.lenient {
		msg = alternation(req.Messages)
	}
	if msg != "" {
		reject(http.StatusBadRequest, "invalid_request_error", "", msg, true)
		return
	}
	toks := Tokenize(rd.text)
	req.Rendered, req.PromptTokens = rd.text, len(toks)

	s.scriptMu.Lock()
	req.Step = s.steps
	s.steps++
	reply := safeReply(s.script, &req)
	s.scriptMu.Unlock()
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", rec.Index, i)
		}
	}
	rec.Reply = &reply
	rec.Fault = reply.Fault

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			rec.Status, rec.Error = 0, "client went away during the scripted delay"
			s.store(rec)
			return
		}
	}

	switch reply.Fault {
	case Fault429:
		if s.cfg.retryAfter >= 0 {
			w.Header().Set("Retry-After", fmt.Sprint(s.cfg.retryAfter))
		}
		reject(http.StatusTooManyRequests, "requests", "rate_limit_exceeded",
			fmt.Sprintf("Rate limit reached for %s. Please try again in %ds.", req.Model, max(s.cfg.retryAfter, 0)), false)
		return
	case Fault500:
		msg := "The server had an error while processing your request. Sorry about that!"
		if reply.panicked != "" {
			msg = reply.panicked
		}
		reject(http.StatusInternalServerError, "server_error", "", msg, false)
		return
	case FaultContextLength:
		reject(http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", len(toks)/2, len(toks)), false)
		return
	}

	if reply.Fault == FaultStall {
		s.store(rec)
		(&answer{reply: reply}).stall(r.Context(), w, s.closing)
		return
	}
	var units *unitRequest
	if s.cfg.cacheRule == CacheUnits {
		units = newUnitRequest(p, rd, toks, reply)
	}
	u := s.account(req.Model, toks, reply, units)
	rec.Status = http.StatusOK
	rec.Prompt, rec.Completion, rec.Hit, rec.Miss, rec.Ideal = u.prompt, u.completion, u.hit, u.miss, u.ideal
	s.store(rec)

	a := answer{
		id: fmt.Sprintf("chatcmpl-llmtest-%d", rec.Index), model: req.Model, reply: reply,
		usage: u, fields: s.cfg.usage, includeUsage: req.IncludeUsage,
	}
	if isStall(reply.Fault) {
		a.stall(r.Context(), w, s.closing)
	} else if req.Stream {
		a.stream(w)
	} else {
		a.json(w)
	}
}

// safeReply calls the script, turning a panic into an HTTP 500 answer whose
// message carries the panic value, so one bad script fails its test
// visibly instead of killing the server goroutine.
func safeReply(sc Script, req *Req) (r Reply) {
	defer func() {
		if p := recover(); p != nil {
			r = Reply{Fault: Fault500, panicked: fmt.Sprintf("llmtest: the script panicked: %v", p)}
		}
	}()
	return sc.Reply(req)
}

type usage struct {
	prompt, completion, hit, miss, ideal, reasoning int
}

// account computes usage for an accepted request and adds its prompt to the
// model's cache; units is non-nil exactly under CacheUnits.
func (s *Server) account(model string, toks []string, reply Reply, units *unitRequest) usage {
	u := usage{prompt: len(toks)}
	if reply.PromptTokens > 0 {
		u.prompt = reply.PromptTokens
	}
	u.reasoning = CountTokens(reply.Reasoning)
	u.completion = CountTokens(reply.Content) + u.reasoning
	for _, tc := range reply.ToolCalls {
		u.completion += CountTokens(tc.Name) + CountTokens(tc.Arguments)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if units != nil {
		hit, ideal := s.serveUnits(model, units)
		u.hit, u.ideal = min(hit, u.prompt), min(ideal, u.prompt)
		u.miss = u.prompt - u.hit
		s.resetNext = false
		return u
	}
	c := s.caches[model]
	if c == nil {
		c = &promptCache{}
		s.caches[model] = c
	}
	u.hit = min(floorUnit(c.lookup(toks), s.cfg.cacheUnit), u.prompt)
	u.miss = u.prompt - u.hit
	if c.any && !s.resetNext {
		u.ideal = floorUnit(len(c.last), s.cfg.cacheUnit)
	}
	s.resetNext = false
	c.add(toks)
	return u
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	body := map[string]any{"error": map[string]any{
		"message": msg,
		"type":    typ,
		"param":   nil,
		"code":    nilIfEmpty(code),
	}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func nilIfEmpty(s string) any {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return s
}
