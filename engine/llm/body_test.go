package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/tally-dev/tally/engine/chat"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// tricky are texts that exercise every escape encoding/json makes: HTML
// characters, quotes and backslashes, control characters, the JavaScript
// line separators, non-ASCII, invalid UTF-8 and the empty string.
var tricky = []string{
	"", "hi", "<b>&amp;</b> <script>x</script>", `"quoted" \back\slash/`,
	"tab\tnew\nline\r\x00\x01\x1f\x7f", "line\u2028sep\u2029par", "héllo, 世界 🎉",
	"bad \xff\xfe utf-8 \xc3", "temperature: 0 \"messages\":[{\"role\":\"tally:body-assembly:messages\"}]",
	`{"json":"inside","n":[1,2]}`, strings.Repeat("long text ", 500),
}

// shapes are message lists covering every field the engine sends: system,
// user, multi-part content with images (data and remote URLs), assistant
// tool calls with reasoning and an empty content, tool results and the
// placeholders themselves as content.
func shapes() map[string][]chat.Message {
	img := "data:image/png;base64,iVBORw0KGgo="
	return map[string][]chat.Message{
		"plain": {
			{Role: "system", Content: "You are careful. <rules> & more"},
			{Role: "user", Content: "hi <b>&</b>"},
			{Role: "assistant", Content: "ok"},
			{Role: "user", Content: "temperature: 0\n\"quoted\""},
		},
		"tools": {
			{Role: "system", Content: "sys"},
			{Role: "user", Content: "list and read"},
			{Role: "assistant", Reasoning: "I should <look> first & read", ToolCalls: []chat.ToolCall{
				{ID: "call_1", Name: "shell", Arguments: `{"cmd":"ls -la | grep '<x>'"}`},
				{ID: "call_2", Name: "read_file", Arguments: `{"path":"a\u00e9.go"}`},
			}},
			{Role: "tool", ToolCallID: "call_1", Content: "a.go\nb.go\n\x1b[31mred\x1b[0m"},
			{Role: "tool", ToolCallID: "call_2", Content: "package main // 世界"},
			{Role: "assistant", Content: "", ToolCalls: []chat.ToolCall{
				{ID: "call_3", Name: "shell", Arguments: ""},
			}},
			{Role: "tool", ToolCallID: "call_3", Content: ""},
			{Role: "assistant", Content: "done <way>"},
		},
		"images": {
			{Role: "user", Parts: []chat.Part{
				{Type: chat.PartText, Text: "what is <this>?"},
				{Type: chat.PartImage, ImageURL: img},
				{Type: chat.PartImage, ImageURL: "https://example.com/a.png?x=1&y=<2>"},
				{Type: chat.PartText, Text: ""},
			}},
			{Role: "assistant", Content: "a cat"},
			{Role: "user", Parts: []chat.Part{}},
		},
		"empty": {
			{Role: "user"},
			{Role: "assistant", Content: ""},
			{Role: "user", Content: "tally:body-assembly:messages"},
			{Role: "tool", ToolCallID: "tally:body-assembly:tools"},
		},
	}
}

// randomMessages returns n messages built from tricky texts.
func randomMessages(r *rand.Rand, n int) []chat.Message {
	pick := func() string { return tricky[r.IntN(len(tricky))] }
	out := make([]chat.Message, 0, n)
	for i := range n {
		var m chat.Message
		switch r.IntN(5) {
		case 0:
			m = chat.Message{Role: "user", Content: pick()}
		case 1:
			m = chat.Message{Role: "user", Parts: []chat.Part{
				{Type: chat.PartText, Text: pick()},
				{Type: chat.PartImage, ImageURL: "data:image/png;base64," + pick()},
			}}
		case 2:
			m = chat.Message{Role: "assistant", Content: pick(), Reasoning: pick()}
			for k := range r.IntN(3) {
				m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: fmt.Sprintf("c%d_%d", i, k), Name: pick(), Arguments: pick()})
			}
		case 3:
			m = chat.Message{Role: "tool", ToolCallID: pick(), Content: pick()}
		default:
			m = chat.Message{Role: pick(), Content: pick()}
		}
		out = append(out, m)
	}
	return out
}

// goOpenAIMessages converts msgs to go-openai's types: the reference the
// body's encoding is held against.
func goOpenAIMessages(msgs []chat.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		o := openai.ChatCompletionMessage{Role: m.Role, ReasoningContent: m.Reasoning, ToolCallID: m.ToolCallID}
		if len(m.Parts) > 0 {
			for _, p := range m.Parts {
				op := openai.ChatMessagePart{Type: openai.ChatMessagePartType(p.Type), Text: p.Text}
				if p.ImageURL != "" {
					op.ImageURL = &openai.ChatMessageImageURL{URL: p.ImageURL}
				}
				o.MultiContent = append(o.MultiContent, op)
			}
		} else {
			o.Content = m.Content
		}
		for _, c := range m.ToolCalls {
			o.ToolCalls = append(o.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		out[i] = o
	}
	return out
}

// goOpenAITools converts tools to go-openai's types.
func goOpenAITools(tools []chat.Tool) []openai.Tool {
	var out []openai.Tool
	for _, t := range tools {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return out
}

// goOpenAIBody returns the body go-openai itself sends for r, through a
// client without this package's transport, so without body assembly: the
// messages and tools as go-openai's own types and encoding.
func goOpenAIBody(t *testing.T, r Request) string {
	t.Helper()
	creq, _, err := r.chatRequest()
	if err != nil {
		t.Fatal(err)
	}
	creq.Messages, creq.Tools = goOpenAIMessages(r.Messages), goOpenAITools(r.Tools)
	var (
		mu   sync.Mutex
		body []byte
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		body = b
		mu.Unlock()
		http.Error(w, `{"error":{"message":"captured"}}`, http.StatusBadRequest)
	}))
	defer ts.Close()
	cfg := openai.DefaultConfig("sk-test")
	cfg.BaseURL = ts.URL + "/v1"
	_, _ = openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), creq)
	mu.Lock()
	defer mu.Unlock()
	if body == nil {
		t.Fatal("go-openai sent no body")
	}
	return string(body)
}

// encodings returns each message's encoding, every other one left nil when
// sparse is set.
func encodings(t *testing.T, msgs []chat.Message, sparse bool) [][]byte {
	t.Helper()
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		if sparse && i%2 == 1 {
			continue
		}
		out[i] = chat.Encode(m)
	}
	return out
}

// TestBodyMatchesGoOpenAI sends many message shapes through the scripted
// server over real HTTP, with no cached encodings, with all of them and
// with every other one, with and without (cached) tools, temperature 0 and
// a cache key, and checks each body against the one go-openai itself
// sends for the same request: equal byte for byte, apart from the two
// members go-openai cannot write.
func TestBodyMatchesGoOpenAI(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithConsecutiveUsers())
	defer srv.Close()
	m := newModel(srv, &recorder{})
	cases := shapes()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		cases[fmt.Sprintf("random %d", i)] = randomMessages(r, 1+r.IntN(12))
	}
	zero, half := float32(0), float32(0.5)
	sent := 0
	for name, msgs := range cases {
		for v := range 16 {
			req := Request{Model: "test-model <&>", Messages: msgs, MaxTokens: 100 * (v % 3)}
			var enc [][]byte
			if v&1 != 0 {
				enc = encodings(t, msgs, v&2 != 0)
			}
			var toolsEnc []byte
			if v&4 != 0 {
				req.Tools = []chat.Tool{shellTool, readTool}
				if v&2 != 0 {
					toolsEnc, _ = chat.EncodeTools(req.Tools)
				}
			}
			req.Encoded = CachedEncodings(req.Messages, enc, req.Tools, toolsEnc)
			switch v / 8 {
			case 1:
				req.Temperature = &zero
			default:
				if v%3 == 1 {
					req.Temperature = &half
				}
			}
			if v%5 == 2 {
				req.CacheKey = "session-<42>&\"x\""
			}
			_, _ = m.Stream(context.Background(), req, Callbacks{})
			got := srv.Requests()
			if len(got) != sent+1 {
				t.Fatalf("%s/%d: the server saw %d requests, want %d", name, v, len(got), sent+1)
			}
			sent++
			want := goOpenAIBody(t, req)
			if req.Temperature != nil && *req.Temperature == 0 {
				want = `{"temperature":0,` + want[1:]
			}
			if req.CacheKey != "" {
				key, _ := json.Marshal(req.CacheKey)
				want = want[:len(want)-1] + `,"prompt_cache_key":` + string(key) + "}"
			}
			if body := string(got[len(got)-1].Body); body != want {
				t.Errorf("%s/%d: the body differs from go-openai's:\n got %s\nwant %s", name, v, body, want)
			}
		}
	}
}

// TestBodyCarriesTheCachedBytes shows that a cached encoding is what is
// sent for the slice it was made for (an entry that is not the encoding of
// its message goes out as given: the caller's guarantee is what makes it
// right), and only for that slice: a copy, a sub-slice or a longer slice
// of the messages, or another tools slice, is encoded for the call.
func TestBodyCarriesTheCachedBytes(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithConsecutiveUsers())
	defer srv.Close()
	m := newModel(srv, &recorder{})
	msgs := make([]chat.Message, 2, 3)
	msgs[0] = chat.Message{Role: "user", Content: "first"}
	msgs[1] = chat.Message{Role: "user", Content: "what is sent"}
	enc := [][]byte{nil, []byte(`{"role":"user","content":"the cached bytes"}`)}
	fake := []chat.Tool{{Name: "cached"}}
	fakeEnc, _ := chat.EncodeTools(fake)
	tools := []chat.Tool{shellTool}
	cached := CachedEncodings(msgs, enc, tools, fakeEnc)
	for _, c := range []struct {
		name      string
		msgs      []chat.Message
		tools     []chat.Tool
		last, one string
	}{
		{"the same slices", msgs, tools, "the cached bytes", "cached"},
		{"a copy", slices.Clone(msgs), slices.Clone(tools), "what is sent", "shell"},
		{"a sub-slice", msgs[:1], tools[:1], "first", "cached"},
		{"a longer slice", append(msgs, chat.Message{Role: "user", Content: "more"}), tools, "more", "cached"},
	} {
		req := Request{Model: "m", Messages: c.msgs, Tools: c.tools, Encoded: cached}
		if _, err := m.Stream(context.Background(), req, Callbacks{}); err != nil {
			t.Fatalf("%s: Stream: %v", c.name, err)
		}
		rec := srv.Requests()[len(srv.Requests())-1]
		got := rec.Messages[len(rec.Messages)-1].Content
		if got != c.last || len(rec.Messages) != len(c.msgs) || len(rec.Tools) != 1 || rec.Tools[0] != c.one {
			t.Errorf("%s: the server read %d messages ending %q and tools %v, want %q and %s", c.name, len(rec.Messages), got, rec.Tools, c.last, c.one)
		}
	}
	if e := CachedEncodings(msgs, enc[:1], nil, nil); e.messagesOf(msgs) != nil {
		t.Error("encodings of the wrong length were kept")
	}
}

// TestBodyCacheKey sends a prompt_cache_key only when one is set, as the
// last top-level member, and the server still reads the request.
func TestBodyCacheKey(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	m := newModel(srv, &recorder{})
	for _, key := range []string{"", "tally-session-1", "ключ <&>"} {
		req := userRequest("hi")
		req.Tools = []chat.Tool{shellTool}
		req.CacheKey = key
		if _, err := m.Stream(context.Background(), req, Callbacks{}); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		rec := srv.Requests()[len(srv.Requests())-1]
		var v struct {
			Key *string `json:"prompt_cache_key"`
		}
		if err := json.Unmarshal(rec.Body, &v); err != nil {
			t.Fatalf("the body is not JSON: %v: %s", err, rec.Body)
		}
		switch {
		case key == "" && v.Key != nil:
			t.Errorf("an empty key was sent: %s", rec.Body)
		case key != "" && (v.Key == nil || *v.Key != key):
			t.Errorf("key %q: body %s", key, rec.Body)
		case key != "" && !strings.HasSuffix(string(rec.Body), `"prompt_cache_key":`+strings.TrimSpace(mustJSON(key))+"}"):
			t.Errorf("key %q is not the last member: %s", key, rec.Body)
		}
		if len(rec.Messages) != 1 || len(rec.Tools) != 1 {
			t.Errorf("key %q: the server read %d messages and %d tools", key, len(rec.Messages), len(rec.Tools))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAssembleEdges covers bodies of shapes go-openai does not write today:
// no member but the messages, and a body without the placeholders, which fails with
// an error saying so instead of sending something else.
func TestAssembleEdges(t *testing.T) {
	key := []byte(`"k"`)
	for _, c := range []struct {
		b       body
		in, out string
	}{
		{body{temperatureZero: true}, `{` + string(messagesHole) + `}`, `{"temperature":0,"messages":[]}`},
		{body{temperatureZero: true}, `{"model":"m",` + string(messagesHole) + `}`, `{"temperature":0,"model":"m","messages":[]}`},
		{body{cacheKey: key}, `{` + string(messagesHole) + `}`, `{"messages":[],"prompt_cache_key":"k"}`},
		{body{cacheKey: key, temperatureZero: true}, `{` + string(messagesHole) + `}`, `{"temperature":0,"messages":[],"prompt_cache_key":"k"}`},
		{body{messages: [][]byte{[]byte(`{"role":"user"}`), []byte(`{"role":"x"}`)}},
			`{"model":"m",` + string(messagesHole) + `,"stream":true}`,
			`{"model":"m","messages":[{"role":"user"},{"role":"x"}],"stream":true}`},
		{body{messages: [][]byte{}}, `{"model":"m",` + string(messagesHole) + `}`, `{"model":"m","messages":[]}`},
	} {
		got, err := assembled(&c.b, c.in)
		if err != nil || string(got) != c.out {
			t.Errorf("%s -> %s, %v; want %s", c.in, got, err, c.out)
		}
	}
	for _, in := range []string{``, `[1]`, `{}`, `{"model":"m","messages":[]}`, `{"model":"m","messages":[{"role":"tally:body-assembly:messages"}]` + "\n"} {
		b := body{messages: [][]byte{[]byte(`{}`)}}
		if got, err := assembled(&b, in); err == nil || !strings.Contains(err.Error(), "report it") {
			t.Errorf("%q -> %s, %v; want an error", in, got, err)
		}
	}
	b := body{tools: []byte(`[]`)}
	if _, err := b.assemble([]byte(`{"model":"m"}`)); err == nil {
		t.Error("a body without the tools placeholder was assembled")
	}
}

// assembled returns the body b assembles from built, read through as the
// transport's client reads it, checking its announced length and that a
// second reader reads it the same.
func assembled(b *body, built string) (string, error) {
	r, err := b.assemble([]byte(built))
	if err != nil {
		return "", err
	}
	again := r.again()
	got, _ := io.ReadAll(r)
	var small strings.Builder
	buf := make([]byte, 3) // reads that end inside every chunk
	for {
		n, err := again.Read(buf)
		small.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if len(got) != r.Len() || small.String() != string(got) {
		return string(got), fmt.Errorf("the body is %d bytes read whole and %q read in pieces, announced as %d", len(got), small.String(), r.Len())
	}
	return string(got), nil
}

// TestBodyIsTheSameOnRetry: a retried call sends the same assembled body
// again, cached encodings and all.
func TestBodyIsTheSameOnRetry(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.Fault500}, llmtest.Text("ok")))
	defer srv.Close()
	m := newModel(srv, &recorder{})
	msgs := shapes()["tools"]
	zero := float32(0)
	req := Request{Model: "m", Messages: msgs, Tools: []chat.Tool{shellTool}, Temperature: &zero, CacheKey: "k",
		Encoded: CachedEncodings(msgs, encodings(t, msgs, true), nil, nil)}
	resp, err := m.Stream(context.Background(), req, Callbacks{})
	if err != nil || resp.Attempts != 2 {
		t.Fatalf("Stream: %+v, %v", resp, err)
	}
	got := srv.Requests()
	if len(got) != 2 || string(got[0].Body) != string(got[1].Body) || !json.Valid(got[1].Body) {
		t.Errorf("the retry sent another body:\n%s\n%s", got[0].Body, got[len(got)-1].Body)
	}
}
