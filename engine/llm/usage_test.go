package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

func TestWireUsage(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Usage
	}{
		{`{"prompt_tokens":100,"completion_tokens":5}`, Usage{PromptTokens: 100, CompletionTokens: 5}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
			Usage{100, 5, 64, 36, true, ""}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":64}}`,
			Usage{100, 5, 64, 36, true, ""}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}`,
			Usage{100, 5, 0, 100, true, ""}},
		{`{"prompt_tokens":100,"prompt_tokens_details":{"audio_tokens":0}}`,
			Usage{PromptTokens: 100}},
		{`{"prompt_tokens":100,"prompt_cache_hit_tokens":128,"prompt_tokens_details":{"cached_tokens":1}}`,
			Usage{100, 0, 128, 0, true, ""}},
	} {
		var w wireUsage
		if err := json.Unmarshal([]byte(tc.body), &w); err != nil {
			t.Fatal(err)
		}
		if got := w.usage(); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

// A hostile server reported negative token counts (prompt_tokens: -5 and
// the like); they were taken as sent and shown negative in the status bar
// and the ledger.
func TestNegativeUsageTokensAreRejected(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{Content: "ok", Usage: json.RawMessage(`{"prompt_tokens":-5,"completion_tokens":-7,"prompt_cache_hit_tokens":-3,"prompt_cache_miss_tokens":-2}`)},
		llmtest.Reply{Content: "ok", Usage: json.RawMessage(`{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":-64}}`)},
		llmtest.Reply{Content: "ok", Usage: json.RawMessage(`{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":64}}`)},
	))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec)
	want := []Usage{
		{CacheReported: true},
		{PromptTokens: 10, CompletionTokens: 2, CacheMissTokens: 10, CacheReported: true},
		{PromptTokens: 10, CompletionTokens: 2, CacheHitTokens: 10, CacheReported: true},
	}
	for i, w := range want {
		resp, err := m.Stream(context.Background(), userRequest("hi"), Callbacks{})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		u := resp.Usage
		if !resp.HasUsage || u.PromptTokens < 0 || u.CompletionTokens < 0 || u.CacheHitTokens < 0 || u.CacheMissTokens < 0 {
			t.Errorf("request %d: usage %+v has a negative count", i, u)
		}
		if !strings.Contains(u.Note, "impossible token counts") {
			t.Errorf("request %d: note %q does not say the counts were replaced", i, u.Note)
		}
		u.Note = ""
		if u != w {
			t.Errorf("request %d: usage %+v, want %+v", i, u, w)
		}
	}
}
