package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// post sends body to the chat endpoint and returns the status and body.
func post(t *testing.T, srv *Server, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read: %v", err)
	}
	return resp.StatusCode, resp.Header, b
}

// chat builds a non-streaming request body from role/content pairs.
func chat(msgs ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
	return string(b)
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func callMsg(ids ...string) map[string]any {
	var calls []any
	for _, id := range ids {
		calls = append(calls, map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "shell", "arguments": `{"cmd":"ls"}`}})
	}
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
}

func toolMsg(id, content string) map[string]any {
	return map[string]any{"role": "tool", "tool_call_id": id, "content": content}
}

func errorMessage(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error body: %s", body)
	}
	return e.Error.Message
}

func TestValidationRejects(t *testing.T) {
	for _, tc := range []struct {
		name, template, body, want string
	}{
		{"late system qwen template", TemplateQwen35, chat(msg("user", "hi"), msg("system", "late")), "System message must be at the beginning"},
		{"late system deepseek", TemplateDeepSeekV4, chat(msg("user", "hi"), msg("system", "late")), "system message is only allowed as the first message"},
		{"late system plain", TemplatePlain, chat(msg("system", "s"), msg("user", "hi"), msg("system", "late")), "messages[2]"},
		{"tool call without result", TemplateQwen35, chat(msg("user", "hi"), callMsg("c1", "c2"), toolMsg("c1", "ok"), msg("user", "next")), "did not have response messages: c2"},
		{"tool call at end without result", TemplateQwen35, chat(msg("user", "hi"), callMsg("c1")), "c1"},
		{"orphan tool result", TemplateQwen35, chat(msg("user", "hi"), toolMsg("c9", "ok")), "must be a response to a preceding message with 'tool_calls'"},
		{"tool result for other id", TemplateQwen35, chat(msg("user", "hi"), callMsg("c1"), toolMsg("c2", "ok")), `"c2"`},
		{"tool result after a user turn", TemplateQwen35, chat(msg("user", "hi"), callMsg("c1"), toolMsg("c1", "ok"), msg("user", "u"), toolMsg("c1", "again")), "must be a response"},
		{"duplicate tool result", TemplateQwen35, chat(msg("user", "hi"), callMsg("c1"), toolMsg("c1", "ok"), toolMsg("c1", "again")), "second time"},
		{"empty messages", TemplateQwen35, `{"model":"m","messages":[]}`, "empty array"},
		{"unknown role", TemplateQwen35, chat(msg("user", "hi"), msg("robot", "beep")), `"robot"`},
		{"bad json", TemplateQwen35, `{"model":`, "could not parse"},
		{"missing model", TemplateQwen35, `{"messages":[{"role":"user","content":"x"}]}`, "model parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(Sequence(), WithTemplate(tc.template))
			defer srv.Close()
			status, _, body := post(t, srv, tc.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, body %s", status, body)
			}
			if m := errorMessage(t, body); !strings.Contains(m, tc.want) {
				t.Errorf("message %q lacks %q", m, tc.want)
			}
			if !strings.Contains(string(body), `"invalid_request_error"`) {
				t.Errorf("body lacks the error type: %s", body)
			}
			inv := srv.Invalid()
			if len(inv) != 1 || inv[0].Status != 400 || inv[0].Error == "" || inv[0].Reply != nil {
				t.Errorf("rejection not recorded as invalid: %+v", inv)
			}
			if st := srv.Stats(); st.Requests != 1 || st.Invalid != 1 || st.Accepted != 0 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestValidToolConversationAccepted(t *testing.T) {
	srv := New(Sequence(Text("done")))
	defer srv.Close()
	body := chat(msg("system", "s"), msg("user", "hi"), callMsg("c1", "c2"), toolMsg("c2", "b"), toolMsg("c1", "a"), msg("assistant", "ok"), msg("user", "more"))
	status, _, b := post(t, srv, body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	if len(srv.Invalid()) != 0 {
		t.Errorf("invalid: %+v", srv.Invalid())
	}
}

func TestAuthModelsAndEndpoints(t *testing.T) {
	srv := New(nil, WithAPIKey("sk-1"), WithModels([]string{"m", "m2"}))
	defer srv.Close()
	if status, _, b := post(t, srv, chat(msg("user", "x"))); status != 401 || !strings.Contains(string(b), "invalid_api_key") {
		t.Errorf("no key: %d %s", status, b)
	}
	if status, _, b := post(t, srv, chat(msg("user", "x")), "Authorization", "Bearer sk-1"); status != 200 {
		t.Errorf("good key: %d %s", status, b)
	}
	if status, _, b := post(t, srv, `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, "Authorization", "Bearer sk-1"); status != 404 || !strings.Contains(string(b), "model_not_found") || !strings.Contains(string(b), "gpt-9") {
		t.Errorf("unknown model: %d %s", status, b)
	}

	c := openai.NewClientWithConfig(func() openai.ClientConfig { c := openai.DefaultConfig("sk-1"); c.BaseURL = srv.URL(); return c }())
	list, err := c.ListModels(context.Background())
	if err != nil || len(list.Models) != 2 || list.Models[1].ID != "m2" {
		t.Errorf("ListModels = %+v, %v", list, err)
	}
	resp, err := http.Get(srv.URL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown path status %d", resp.StatusCode)
	}
}

func TestUnknownTemplateFailsLoudly(t *testing.T) {
	srv := New(nil, WithTemplate("llama-9"))
	defer srv.Close()
	status, _, b := post(t, srv, chat(msg("user", "x")))
	if status != 500 || !strings.Contains(errorMessage(t, b), `"llama-9"`) {
		t.Errorf("%d %s", status, b)
	}
}

func TestFaults(t *testing.T) {
	srv := New(Sequence(
		Reply{Fault: Fault429},
		Reply{Fault: Fault500},
		Reply{Fault: FaultContextLength},
		Reply{Fault: FaultDropStream},
		Reply{Content: "abcdefghijklmnopqrstuvwxyz", Fault: FaultDropAfterContent},
	), WithRetryAfter(7))
	defer srv.Close()
	body := chat(msg("user", "x"))

	status, h, b := post(t, srv, body)
	if status != 429 || h.Get("Retry-After") != "7" {
		t.Errorf("429: %d %q %s", status, h.Get("Retry-After"), b)
	}
	if status, _, b = post(t, srv, body); status != 500 {
		t.Errorf("500: %d %s", status, b)
	}
	status, _, b = post(t, srv, body)
	if status != 400 || !strings.Contains(string(b), "context_length_exceeded") || !strings.Contains(errorMessage(t, b), "maximum context length") {
		t.Errorf("context length: %d %s", status, b)
	}
	stream := `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
	status, _, b = post(t, srv, stream)
	if status != 200 || strings.Contains(string(b), "[DONE]") || strings.Contains(string(b), `"content":"a`) {
		t.Errorf("drop stream: %d %s", status, b)
	}
	status, _, b = post(t, srv, stream)
	if status != 200 || strings.Contains(string(b), "[DONE]") || !strings.Contains(string(b), `"content":"abcdefghijkl"`) || strings.Contains(string(b), "xyz") {
		t.Errorf("drop after content: %d %s", status, b)
	}
	st := srv.Stats()
	if st.Requests != 5 || st.Faults != 5 || st.Invalid != 0 || st.Accepted != 2 {
		t.Errorf("stats = %+v", st)
	}
	if srv.Requests()[0].Fault != Fault429 || srv.Requests()[0].Invalid {
		t.Errorf("fault not recorded: %+v", srv.Requests()[0])
	}
}

func TestSequenceExhaustion(t *testing.T) {
	srv := New(Sequence(Text("one")))
	defer srv.Close()
	var contents []string
	for range 3 {
		_, _, b := post(t, srv, chat(msg("user", "x")))
		var r openai.ChatCompletionResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		contents = append(contents, r.Choices[0].Message.Content)
	}
	if got := strings.Join(contents, "|"); got != "one|"+ExhaustedContent+"|"+ExhaustedContent {
		t.Errorf("contents = %s", got)
	}
	if ExhaustedContent != "llmtest: script exhausted" {
		t.Errorf("ExhaustedContent changed")
	}
}

func TestNonStreamingAnswer(t *testing.T) {
	srv := New(Sequence(Reply{Reasoning: "hmm", Content: "hi", ToolCalls: []ToolCall{{Name: "shell", Arguments: `{"cmd":"ls"}`}}}))
	defer srv.Close()
	status, _, b := post(t, srv, chat(msg("user", "x")))
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	var r openai.ChatCompletionResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	m := r.Choices[0].Message
	if m.Content != "hi" || m.ReasoningContent != "hmm" || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_0_0" || m.ToolCalls[0].Function.Arguments != `{"cmd":"ls"}` {
		t.Errorf("message = %+v", m)
	}
	if r.Choices[0].FinishReason != "tool_calls" || r.Usage.PromptTokens == 0 || r.Usage.PromptTokensDetails == nil {
		t.Errorf("response = %+v", r)
	}
}

// streamAll reads a whole stream through go-openai.
func streamAll(t *testing.T, srv *Server, req openai.ChatCompletionRequest) []openai.ChatCompletionStreamResponse {
	t.Helper()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = srv.URL()
	s, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer s.Close()
	var out []openai.ChatCompletionStreamResponse
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		out = append(out, c)
	}
}

func TestStreamingChunks(t *testing.T) {
	srv := New(Sequence(Reply{
		Reasoning: "thinking about the question",
		Content:   "here is a fairly long answer",
		ToolCalls: []ToolCall{{ID: "x1", Name: "shell", Arguments: `{"cmd":"grep -rn TODO ."}`}},
	}, Text("short")))
	defer srv.Close()
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "q"}}, StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	chunks := streamAll(t, srv, req)

	var reasoning, content, args strings.Builder
	var argChunks int
	var usage *openai.Usage
	var finish openai.FinishReason
	for _, c := range chunks {
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			reasoning.WriteString(ch.Delta.ReasoningContent)
			content.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" && (tc.ID != "x1" || tc.Function.Name != "shell" || tc.Function.Arguments != "") {
					t.Errorf("first tool delta = %+v, want id and name only", tc)
				}
				if tc.Function.Arguments != "" {
					argChunks++
				}
				args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if reasoning.String() != "thinking about the question" || content.String() != "here is a fairly long answer" || args.String() != `{"cmd":"grep -rn TODO ."}` {
		t.Errorf("assembled %q / %q / %q", reasoning.String(), content.String(), args.String())
	}
	if argChunks < 2 {
		t.Errorf("arguments came in %d chunks, want them split", argChunks)
	}
	if finish != "tool_calls" {
		t.Errorf("finish = %q", finish)
	}
	rec := srv.Requests()[0]
	if usage == nil || usage.PromptTokens != rec.Prompt || usage.CompletionTokens != rec.Completion || usage.PromptTokensDetails == nil {
		t.Errorf("usage = %+v, record %+v", usage, rec)
	}

	req.StreamOptions = nil
	for _, c := range streamAll(t, srv, req) {
		if c.Usage != nil {
			t.Errorf("usage sent without include_usage")
		}
	}
}

func TestTemplateFallbackRecorded(t *testing.T) {
	srv := New(nil)
	defer srv.Close()
	// The Qwen template needs a user query; a conversation without one
	// falls back to the plain rendering.
	status, _, b := post(t, srv, chat(msg("system", "only a system prompt")))
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	r := srv.Requests()[0]
	if !r.FellBack || r.Template != TemplatePlain || !strings.Contains(r.RenderError, "No user query") || !strings.Contains(r.Rendered, "only a system prompt") {
		t.Errorf("record = %+v", r)
	}
}

func TestConcurrentRequests(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	srv := New(ScriptFunc(func(r *Req) Reply {
		mu.Lock()
		defer mu.Unlock()
		seen[r.Step] = true
		return Text(fmt.Sprintf("reply to %s", r.LastUser()))
	}))
	defer srv.Close()
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 20 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","stream":%v,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"shared prefix"},{"role":"user","content":"n%d"}]}`, i%2 == 0, i)
			resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader([]byte(body)))
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), fmt.Sprintf("n%d", i)) {
				errs <- fmt.Sprintf("%d: %s", resp.StatusCode, b)
			}
			_ = srv.Stats()
			_ = srv.Requests()
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	st := srv.Stats()
	if st.Requests != 20 || st.Accepted != 20 || len(seen) != 20 {
		t.Errorf("stats %+v, %d distinct steps", st, len(seen))
	}
}
