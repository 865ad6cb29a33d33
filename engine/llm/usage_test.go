package llm

import (
	"encoding/json"
	"testing"
)

func TestWireUsage(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Usage
	}{
		{`{"prompt_tokens":100,"completion_tokens":5}`, Usage{PromptTokens: 100, CompletionTokens: 5}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
			Usage{100, 5, 64, 36, true}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":64}}`,
			Usage{100, 5, 64, 36, true}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}`,
			Usage{100, 5, 0, 100, true}},
		{`{"prompt_tokens":100,"prompt_tokens_details":{"audio_tokens":0}}`,
			Usage{PromptTokens: 100}},
		{`{"prompt_tokens":100,"prompt_cache_hit_tokens":128,"prompt_tokens_details":{"cached_tokens":1}}`,
			Usage{100, 0, 128, 0, true}},
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
