package realmodel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// llamaStream is an answer with one tool call as llama-server streams it:
// the call's name and id in one event, its arguments in pieces, the
// finish_reason in an event of its own, then the usage with the timings.
var llamaStream = []string{
	`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}`,
	`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"abc","type":"function","function":{"name":"read_file","arguments":""}}]}}],"object":"chat.completion.chunk"}`,
	`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}],"object":"chat.completion.chunk"}`,
	`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"a.txt\"}"}}]}}],"object":"chat.completion.chunk"}`,
	`{"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"object":"chat.completion.chunk"}`,
	`{"choices":[],"object":"chat.completion.chunk","usage":{"completion_tokens":12,"prompt_tokens":900,"total_tokens":912,"prompt_tokens_details":{"cached_tokens":850}},"timings":{"cache_n":850,"prompt_n":50,"prompt_ms":40.5,"predicted_n":12,"predicted_ms":100}}`,
}

func fakeLlama(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range llamaStream {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(ts.Close)
	return ts
}

// post sends one chat request through the proxy and returns the tool
// call the client assembled from what it received.
func post(t *testing.T, url string) Call {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	st := &streamState{}
	var e Exchange
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "[DONE]" {
			st.chunk(&e, []byte(data))
		}
	}
	if c := st.calls(); len(c) == 1 {
		return c[0]
	}
	t.Fatalf("the client got %d calls", len(st.calls()))
	return Call{}
}

func TestProxyRecordsLlamaServersFigures(t *testing.T) {
	p := NewProxy(fakeLlama(t).URL)
	front := httptest.NewServer(p)
	defer front.Close()
	got := post(t, front.URL)
	if got.Name != "read_file" || got.Arguments != `{"path": "a.txt"}` {
		t.Errorf("the client got %+v", got)
	}
	ex := p.Exchanges()
	if len(ex) != 1 {
		t.Fatalf("%d exchanges", len(ex))
	}
	e := ex[0]
	if !e.Chat() || !e.Stream || e.Status != 200 || e.Finish != "tool_calls" || e.Chunks != len(llamaStream) {
		t.Errorf("exchange %+v", e)
	}
	if e.Timings == nil || e.Timings.CacheN != 850 || e.Timings.PromptN != 50 || e.Usage == nil || e.Usage.PromptTokens != 900 {
		t.Errorf("timings %+v usage %+v", e.Timings, e.Usage)
	}
	if len(e.Calls) != 1 || e.Calls[0].ID != "abc" || e.Fault != "" {
		t.Errorf("calls %+v fault %q", e.Calls, e.Fault)
	}
	if !strings.Contains(string(e.Request), `"content":"hi"`) {
		t.Errorf("request %s", e.Request)
	}
}

func TestProxyBreaksToolCalls(t *testing.T) {
	p := NewProxy(fakeLlama(t).URL)
	front := httptest.NewServer(p)
	defer front.Close()
	p.Break(FaultUnknownTool, FaultBadJSON, FaultNoArguments)
	if c := post(t, front.URL); c.Name != "read_file_v2" || c.Arguments != `{"path": "a.txt"}` {
		t.Errorf("unknown tool: %+v", c)
	}
	c := post(t, front.URL)
	if c.Name != "read_file" || json.Valid([]byte(c.Arguments)) {
		t.Errorf("bad JSON: %+v", c)
	}
	if c := post(t, front.URL); c.Name != "read_file" || c.Arguments != "{}" {
		t.Errorf("no arguments: %+v", c)
	}
	if p.Pending() != 0 {
		t.Errorf("%d faults left", p.Pending())
	}
	for i, e := range p.Exchanges() {
		if e.Fault == "" || e.Calls[0].Name != "read_file" {
			t.Errorf("exchange %d: fault %q, recorded call %+v (the server's)", i, e.Fault, e.Calls)
		}
	}
	if c := post(t, front.URL); c.Name != "read_file" || c.Arguments != `{"path": "a.txt"}` {
		t.Errorf("with no fault queued: %+v", c)
	}
}

func TestProxySaysWhenTheServerIsGone(t *testing.T) {
	ts := fakeLlama(t)
	p := NewProxy(ts.URL)
	ts.Close()
	front := httptest.NewServer(p)
	defer front.Close()
	resp, err := http.Post(front.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || p.Exchanges()[0].Err == "" {
		t.Errorf("status %d, exchange %+v", resp.StatusCode, p.Exchanges()[0])
	}
}

func TestCheckRequest(t *testing.T) {
	good := `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},
		{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"a","arguments":"{}"}},{"id":"2","function":{"name":"b","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"1","content":"r"},{"role":"tool","tool_call_id":"2","content":"r"},{"role":"assistant","content":"done"}]}`
	if err := CheckRequest([]byte(good)); err != nil {
		t.Errorf("good request: %v", err)
	}
	bad := map[string]string{
		"late system":   `{"messages":[{"role":"user","content":"u"},{"role":"system","content":"s"}]}`,
		"orphan result": `{"messages":[{"role":"user","content":"u"},{"role":"tool","tool_call_id":"9","content":"r"}]}`,
		"open call":     `{"messages":[{"role":"user","content":"u"},{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"a"}}]},{"role":"user","content":"u"}]}`,
		"trailing call": `{"messages":[{"role":"user","content":"u"},{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"a"}}]}]}`,
		"repeated id":   `{"messages":[{"role":"assistant","tool_calls":[{"id":"1"},{"id":"1"}]}]}`,
		"empty":         `{"messages":[]}`,
		"not JSON":      `{`,
	}
	for name, body := range bad {
		if err := CheckRequest([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSharedMessages(t *testing.T) {
	a := `{"tools":[{"x":1}],"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`
	b := `{"tools":[{"x":1}],"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"a"}]}`
	c := `{"tools":[{"x":2}],"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`
	if n := SharedMessages([]byte(a), []byte(b)); n != 2 {
		t.Errorf("extension shares %d, want 2", n)
	}
	if n := SharedMessages([]byte(a), []byte(c)); n != 0 {
		t.Errorf("a changed catalog shares %d, want 0", n)
	}
}
