package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// recorder collects callbacks and waits.
type recorder struct {
	deltas  []Delta
	retries []Retry
	waits   []time.Duration
}

func (r *recorder) callbacks() Callbacks {
	return Callbacks{
		OnDelta: func(d Delta) { r.deltas = append(r.deltas, d) },
		OnRetry: func(x Retry) { r.retries = append(r.retries, x) },
	}
}

func (r *recorder) text() (content, reasoning string) {
	var c, rs strings.Builder
	for _, d := range r.deltas {
		c.WriteString(d.Content)
		rs.WriteString(d.Reasoning)
	}
	return c.String(), rs.String()
}

// newModel returns a model talking to srv whose sleeps are recorded in rec
// instead of waited.
func newModel(srv *llmtest.Server, rec *recorder, edit ...func(*Config)) *OpenAI {
	cfg := Config{
		BaseURL: srv.URL(),
		APIKey:  "sk-test-key",
		Sleep: func(ctx context.Context, d time.Duration) error {
			rec.waits = append(rec.waits, d)
			return ctx.Err()
		},
	}
	for _, e := range edit {
		e(&cfg)
	}
	return NewOpenAI(cfg)
}

func userRequest(text string) Request {
	return Request{
		Model:    "test-model",
		Messages: []chat.Message{{Role: chat.RoleUser, Content: text}},
	}
}

var shellTool = chat.Tool{
	Name:        "shell",
	Description: "Run a shell command",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`),
}

var readTool = chat.Tool{
	Name:        "read_file",
	Description: "Read a file",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
}

func TestStreamAssemblesTextReasoningAndToolCalls(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{
		Reasoning: "The user wants the listing; I should run ls and read the readme.",
		Content:   "Let me look at the files in this directory.",
		ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "shell", Arguments: `{"cmd":"ls -la /tmp/some/longer/path"}`},
			{Name: "read_file", Arguments: `{"path":"README.md"}`},
		},
	}))
	defer srv.Close()
	var rec recorder
	req := userRequest("what is here?")
	req.Tools = []chat.Tool{shellTool, readTool}
	resp, err := newModel(srv, &rec).Stream(context.Background(), req, rec.callbacks())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Content != "Let me look at the files in this directory." {
		t.Errorf("Content = %q", resp.Content)
	}
	if resp.Reasoning != "The user wants the listing; I should run ls and read the readme." {
		t.Errorf("Reasoning = %q", resp.Reasoning)
	}
	want := []ToolCall{
		{ID: "call_a", Name: "shell", Arguments: `{"cmd":"ls -la /tmp/some/longer/path"}`},
		{ID: "call_0_1", Name: "read_file", Arguments: `{"path":"README.md"}`},
	}
	if fmt.Sprint(resp.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("ToolCalls = %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.FinishReason != "tool_calls" {
		t.Errorf("FinishReason = %q", resp.FinishReason)
	}
	if resp.Attempts != 1 || resp.Duration <= 0 {
		t.Errorf("Attempts = %d, Duration = %v", resp.Attempts, resp.Duration)
	}
	if len(rec.deltas) < 4 {
		t.Errorf("got %d deltas, want the text streamed in several pieces", len(rec.deltas))
	}
	c, r := rec.text()
	if c != resp.Content || r != resp.Reasoning {
		t.Errorf("deltas do not add up to the response: %q / %q", c, r)
	}
	if !resp.HasUsage || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage missing: %+v (HasUsage %v)", resp.Usage, resp.HasUsage)
	}

	got := srv.Requests()
	if len(got) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(got))
	}
	if got[0].Template != llmtest.TemplateQwen35 || got[0].FellBack {
		t.Errorf("request was not rendered by the template: %s %s", got[0].Template, got[0].RenderError)
	}
	if strings.Join(got[0].Tools, ",") != "shell,read_file" {
		t.Errorf("tools sent = %v, want shell,read_file in order", got[0].Tools)
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || body["stream_options"] == nil {
		t.Errorf("request did not ask for a stream with usage: %s", got[0].Body)
	}
	if _, ok := body["temperature"]; ok {
		t.Errorf("temperature was sent although nil: %s", got[0].Body)
	}
	if _, ok := body["max_tokens"]; ok {
		t.Errorf("max_tokens was sent although 0: %s", got[0].Body)
	}
}

func TestStreamSendsMessagesInOrder(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	var rec recorder
	req := Request{Model: "m", MaxTokens: 77, Messages: []chat.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "u1"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"cmd":"ls"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "out"},
		{Role: "user", Content: "u2"},
	}}
	if _, err := newModel(srv, &rec).Stream(context.Background(), req, rec.callbacks()); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r := srv.Requests()[0]
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, m.Role+":"+m.Content)
	}
	if got := strings.Join(roles, " "); got != "system:sys user:u1 assistant: tool:out user:u2" {
		t.Errorf("messages = %s", got)
	}
	if r.MaxTokens != 77 {
		t.Errorf("max_tokens = %d, want 77", r.MaxTokens)
	}
	if r.Messages[2].ToolCalls[0].Arguments != `{"cmd":"ls"}` {
		t.Errorf("tool call arguments = %q", r.Messages[2].ToolCalls[0].Arguments)
	}
}

func TestUsageDeepSeekAndOpenAIFields(t *testing.T) {
	long := strings.Repeat("A long shared system prompt sentence. ", 60)
	conv := func(extra string) Request {
		return Request{Model: "m", Messages: []chat.Message{
			{Role: "system", Content: long},
			{Role: "user", Content: "question " + extra},
		}}
	}
	for _, tc := range []struct {
		name   string
		fields llmtest.UsageFields
		cache  bool
	}{
		{"deepseek", llmtest.UsageDeepSeek, true},
		{"openai", llmtest.UsageOpenAI, true},
		{"none", llmtest.UsageNoCache, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(nil, llmtest.WithUsageFields(tc.fields))
			defer srv.Close()
			var rec recorder
			m := newModel(srv, &rec)
			if _, err := m.Stream(context.Background(), conv("one"), Callbacks{}); err != nil {
				t.Fatal(err)
			}
			resp, err := m.Stream(context.Background(), conv("two"), Callbacks{})
			if err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[1]
			u := resp.Usage
			if !resp.HasUsage || u.PromptTokens != r.Prompt || u.CompletionTokens != r.Completion {
				t.Fatalf("usage %+v does not match the server's %d/%d", u, r.Prompt, r.Completion)
			}
			if u.CacheReported != tc.cache {
				t.Fatalf("CacheReported = %v, want %v", u.CacheReported, tc.cache)
			}
			if !tc.cache {
				return
			}
			if r.Hit == 0 {
				t.Fatalf("test setup: the server reported no cache hit")
			}
			if u.CacheHitTokens != r.Hit || u.CacheMissTokens != r.Miss {
				t.Errorf("cache hit/miss = %d/%d, want %d/%d", u.CacheHitTokens, u.CacheMissTokens, r.Hit, r.Miss)
			}
		})
	}
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{Fault: llmtest.Fault429},
		llmtest.Reply{Fault: llmtest.Fault429},
		llmtest.Text("ok"),
	), llmtest.WithRetryAfter(3))
	defer srv.Close()
	var rec recorder
	resp, err := newModel(srv, &rec).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Content != "ok" || resp.Attempts != 3 {
		t.Errorf("Content %q after %d attempts, want ok after 3", resp.Content, resp.Attempts)
	}
	if len(rec.retries) != 2 {
		t.Fatalf("got %d OnRetry events, want 2", len(rec.retries))
	}
	for i, r := range rec.retries {
		want := Retry{Attempt: i + 2, MaxAttempts: 5, Wait: 3 * time.Second, Reason: "rate limited (HTTP 429)", Status: 429}
		if r != want {
			t.Errorf("retry %d = %+v, want %+v", i, r, want)
		}
	}
	if fmt.Sprint(rec.waits) != "[3s 3s]" {
		t.Errorf("slept %v, want [3s 3s]", rec.waits)
	}
}

func TestRetryAfterLongerThanMaxDelayGivesUp(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.Fault429}, llmtest.Text("ok")), llmtest.WithRetryAfter(120))
	defer srv.Close()
	var rec recorder
	_, err := newModel(srv, &rec).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if err == nil || !strings.Contains(err.Error(), "asked to wait 2m0s") {
		t.Fatalf("err = %v, want a refusal to wait 2m0s", err)
	}
	if len(rec.waits) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("waited %v and made %d requests, want no retry", rec.waits, len(srv.Requests()))
	}
}

func TestRetry500ThenSuccess(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.Fault500}, llmtest.Text("recovered")))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec, func(c *Config) { c.BaseDelay = 100 * time.Millisecond; c.MaxDelay = time.Second })
	resp, err := m.Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Content != "recovered" || resp.Attempts != 2 {
		t.Errorf("got %q after %d attempts", resp.Content, resp.Attempts)
	}
	if len(rec.retries) != 1 || rec.retries[0].Status != 500 || rec.retries[0].Attempt != 2 {
		t.Fatalf("retries = %+v", rec.retries)
	}
	if w := rec.waits[0]; w < 0 || w > 100*time.Millisecond {
		t.Errorf("first backoff %v is outside the jitter range [0, 100ms]", w)
	}
}

func TestRetryDroppedStreamBeforeContent(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.FaultDropStream}, llmtest.Text("second time lucky")))
	defer srv.Close()
	var rec recorder
	resp, err := newModel(srv, &rec).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Content != "second time lucky" || resp.Attempts != 2 {
		t.Errorf("got %q after %d attempts", resp.Content, resp.Attempts)
	}
	if len(rec.retries) != 1 || rec.retries[0].Reason != "stream cut before any output" {
		t.Errorf("retries = %+v", rec.retries)
	}
	if c, _ := rec.text(); c != "second time lucky" {
		t.Errorf("deltas shown = %q, want only the successful attempt's text", c)
	}
}

func TestDroppedAfterContentIsNotRetried(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "Partial answer that gets cut", Fault: llmtest.FaultDropAfterContent}, llmtest.Text("never")))
	defer srv.Close()
	var rec recorder
	_, err := newModel(srv, &rec).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if !errors.Is(err, ErrStreamCut) {
		t.Fatalf("err = %v, want ErrStreamCut", err)
	}
	if IsRetryable(err) {
		t.Errorf("IsRetryable(%v) = true after output was shown", err)
	}
	if len(srv.Requests()) != 1 || len(rec.retries) != 0 {
		t.Errorf("%d requests, %d retries; want 1 and 0", len(srv.Requests()), len(rec.retries))
	}
	if c, _ := rec.text(); c == "" {
		t.Errorf("no partial text was delivered before the cut")
	}
}

func TestBadRequestNotRetriedAndMessageShown(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	var rec recorder
	req := Request{Model: "m", Messages: []chat.Message{
		{Role: "user", Content: "hi"},
		{Role: "system", Content: "late system"},
	}}
	_, err := newModel(srv, &rec).Stream(context.Background(), req, rec.callbacks())
	var api *APIError
	if !errors.As(err, &api) || api.Status != 400 {
		t.Fatalf("err = %v, want an HTTP 400 APIError", err)
	}
	if !strings.HasPrefix(err.Error(), "the server rejected the request (HTTP 400): ") || !strings.Contains(err.Error(), "System message must be at the beginning") {
		t.Errorf("error text = %q", err.Error())
	}
	if len(srv.Requests()) != 1 || len(rec.retries) != 0 || IsRetryable(err) {
		t.Errorf("a 400 was retried")
	}
}

func TestContextLengthError(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.FaultContextLength}))
	defer srv.Close()
	var rec recorder
	_, err := newModel(srv, &rec).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if !IsContextLengthExceeded(err) {
		t.Fatalf("IsContextLengthExceeded(%v) = false", err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("context-length error was retried")
	}
}

func TestUnauthorized(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithAPIKey("sk-right"))
	defer srv.Close()
	var rec recorder
	_, err := newModel(srv, &rec, func(c *Config) { c.APIKey = "sk-wrong-secret" }).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if !IsUnauthorized(err) {
		t.Fatalf("err = %v, want unauthorized", err)
	}
	if !strings.Contains(err.Error(), "API key") || strings.Contains(err.Error(), "sk-wrong-secret") {
		t.Errorf("error text = %q", err.Error())
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("a 401 was retried")
	}
}

func TestUnknownModel(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithModels([]string{"known"}))
	defer srv.Close()
	var rec recorder
	_, err := newModel(srv, &rec).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if !IsModelNotFound(err) || !strings.Contains(err.Error(), `"test-model"`) {
		t.Fatalf("err = %v, want a model-not-found error naming test-model", err)
	}
}

func TestCancellationDuringResponse(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "slow", Delay: 10 * time.Second}))
	defer srv.Close()
	var rec recorder
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := newModel(srv, &rec).Stream(ctx, userRequest("hi"), rec.callbacks())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	if len(rec.retries) != 0 {
		t.Errorf("a cancelled call was retried")
	}
}

func TestCancellationDuringBackoff(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.Fault500}, llmtest.Text("ok")))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	m := NewOpenAI(Config{BaseURL: srv.URL(), BaseDelay: time.Hour, MaxDelay: time.Hour})
	m.rand = func() float64 { return 1 }
	_, err := m.Stream(ctx, userRequest("hi"), Callbacks{OnRetry: func(Retry) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestTemperatureZeroIsSent(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec)
	for _, temp := range []float32{0, 0.7} {
		req := userRequest("hi")
		req.Temperature = &temp
		if _, err := m.Stream(context.Background(), req, Callbacks{}); err != nil {
			t.Fatalf("Stream: %v", err)
		}
	}
	got := srv.Requests()
	if got[0].Temperature == nil || *got[0].Temperature != 0 {
		t.Errorf("temperature 0 was not sent: %s", got[0].Body)
	}
	if got[1].Temperature == nil || *got[1].Temperature < 0.69 || *got[1].Temperature > 0.71 {
		t.Errorf("temperature 0.7 was not sent: %s", got[1].Body)
	}
	if len(srv.Invalid()) != 0 {
		t.Errorf("server rejected a request: %+v", srv.Invalid())
	}
}

func TestExhaustedAttempts(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Reply{Fault: llmtest.Fault500} }))
	defer srv.Close()
	var rec recorder
	_, err := newModel(srv, &rec, func(c *Config) { c.MaxAttempts = 3 }).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	var api *APIError
	if !errors.As(err, &api) || api.Status != 500 || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Requests()) != 3 || len(rec.retries) != 2 {
		t.Errorf("%d requests, %d retries; want 3 and 2", len(srv.Requests()), len(rec.retries))
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	const key = "sk-very-secret-123"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"bad header %s","type":"invalid_request_error"}}`, r.Header.Get("Authorization"))
	}))
	defer hs.Close()
	_, err := NewOpenAI(Config{BaseURL: hs.URL + "/v1", APIKey: key}).Stream(context.Background(), userRequest("hi"), Callbacks{})
	if err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err = %v, want the key replaced by [redacted]", err)
	}
}

func TestInvalidBaseURL(t *testing.T) {
	for _, u := range []string{"api.example.com/v1", "ftp://x/v1", "http://"} {
		_, err := NewOpenAI(Config{BaseURL: u}).Stream(context.Background(), userRequest("hi"), Callbacks{})
		if err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("%q: err = %v, want a base URL error", u, err)
		}
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html><body>502 Bad Gateway</body></html>")
	}))
	defer hs.Close()
	var rec recorder
	cfg := Config{BaseURL: hs.URL, MaxAttempts: 2, Sleep: func(ctx context.Context, d time.Duration) error { return nil }}
	_, err := NewOpenAI(cfg).Stream(context.Background(), userRequest("hi"), rec.callbacks())
	var api *APIError
	if !errors.As(err, &api) || api.Status != 502 || !strings.Contains(api.Message, "502 Bad Gateway") {
		t.Fatalf("err = %v", err)
	}
}

func TestFuncAdapter(t *testing.T) {
	var m Model = Func(func(ctx context.Context, req Request, cb Callbacks) (*Response, error) {
		cb.delta(Delta{Content: req.Model})
		return &Response{Content: req.Model}, nil
	})
	var got string
	resp, err := m.Stream(context.Background(), Request{Model: "fake"}, Callbacks{OnDelta: func(d Delta) { got += d.Content }})
	if err != nil || resp.Content != "fake" || got != "fake" {
		t.Fatalf("resp %+v, err %v, deltas %q", resp, err, got)
	}
	if _, err := Func(nil).Stream(context.Background(), Request{}, Callbacks{}); err == nil {
		t.Errorf("nil Func returned no error")
	}
}

func TestAgentLoopIsValidAndCacheFriendly(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if r.Step < 4 {
			return llmtest.Reply{
				Reasoning: "I need to look at more files before answering.",
				ToolCalls: []llmtest.ToolCall{{Name: "shell", Arguments: fmt.Sprintf(`{"cmd":"cat file%d.go"}`, r.Step)}},
			}
		}
		return llmtest.Text("All files read.")
	}))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec)
	req := Request{Model: "m", Tools: []chat.Tool{shellTool, readTool}, Messages: []chat.Message{
		{Role: "system", Content: strings.Repeat("You are a coding agent. Follow the rules carefully. ", 30)},
		{Role: "user", Content: "Read every file."},
	}}
	for step := 0; ; step++ {
		resp, err := m.Stream(context.Background(), req, Callbacks{})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if len(resp.ToolCalls) == 0 {
			break
		}
		msg := chat.Message{Role: "assistant", Content: resp.Content, Reasoning: resp.Reasoning}
		for _, tc := range resp.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		req.Messages = append(req.Messages, msg)
		for _, tc := range resp.ToolCalls {
			req.Messages = append(req.Messages, chat.Message{Role: "tool", ToolCallID: tc.ID, Content: strings.Repeat("package main // line\n", 20)})
		}
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("server rejected %d requests; first: %s", len(bad), bad[0].Error)
	}
	recs := srv.Requests()
	if len(recs) != 5 {
		t.Fatalf("%d requests, want 5", len(recs))
	}
	for i, r := range recs {
		if r.FellBack {
			t.Errorf("request %d fell back to plain rendering: %s", i, r.RenderError)
		}
		if i > 0 && r.Hit < r.Ideal-64 {
			t.Errorf("request %d: hit %d far below the ideal %d", i, r.Hit, r.Ideal)
		}
	}
	if st := srv.Stats(); st.Hit == 0 || st.Hit > st.Ideal {
		t.Errorf("stats = %+v", st)
	}
}
