package llm

import (
	"fmt"
	"strings"
)

// Usage is the token usage a backend reported for one call.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CacheHitTokens and CacheMissTokens split PromptTokens into the part
	// served from the backend's prompt cache and the rest. They come from
	// DeepSeek's prompt_cache_hit_tokens / prompt_cache_miss_tokens or,
	// failing that, from OpenAI's prompt_tokens_details.cached_tokens (miss
	// = prompt - cached).
	CacheHitTokens  int
	CacheMissTokens int
	// CacheReported is false when the backend sent no cache field at all;
	// the cache counts are then zero and mean nothing.
	CacheReported bool
	// Note says, in one sentence, which counts the backend reported were
	// impossible and were replaced (a negative count becomes 0, a cache hit
	// count above the prompt becomes the prompt's count); it is empty when
	// the usage was taken as sent.
	Note string
}

// wireUsage is the usage object of a chat-completions response, covering
// both the DeepSeek and the OpenAI cache fields.
type wireUsage struct {
	PromptTokens          int  `json:"prompt_tokens"`
	CompletionTokens      int  `json:"completion_tokens"`
	PromptCacheHitTokens  *int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens *int `json:"prompt_cache_miss_tokens"`
	PromptTokensDetails   *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// usage converts the wire form. DeepSeek's explicit hit/miss fields win
// over OpenAI's cached_tokens when both are present.
func (w *wireUsage) usage() Usage {
	var bad []string
	u := Usage{PromptTokens: nonNegative(w.PromptTokens, "prompt_tokens", &bad),
		CompletionTokens: nonNegative(w.CompletionTokens, "completion_tokens", &bad)}
	switch {
	case w.PromptCacheHitTokens != nil || w.PromptCacheMissTokens != nil:
		u.CacheReported = true
		if w.PromptCacheHitTokens != nil {
			u.CacheHitTokens = nonNegative(*w.PromptCacheHitTokens, "prompt_cache_hit_tokens", &bad)
		}
		if w.PromptCacheMissTokens != nil {
			u.CacheMissTokens = nonNegative(*w.PromptCacheMissTokens, "prompt_cache_miss_tokens", &bad)
		} else {
			u.CacheMissTokens = max(u.PromptTokens-u.CacheHitTokens, 0)
		}
	case w.PromptTokensDetails != nil && w.PromptTokensDetails.CachedTokens != nil:
		u.CacheReported = true
		u.CacheHitTokens = nonNegative(*w.PromptTokensDetails.CachedTokens, "cached_tokens", &bad)
		if u.CacheHitTokens > u.PromptTokens {
			bad = append(bad, fmt.Sprintf("cached_tokens %d above prompt_tokens %d", u.CacheHitTokens, u.PromptTokens))
			u.CacheHitTokens = u.PromptTokens
		}
		u.CacheMissTokens = max(u.PromptTokens-u.CacheHitTokens, 0)
	}
	if len(bad) > 0 {
		u.Note = "the server reported impossible token counts (" + strings.Join(bad, ", ") +
			"); they were replaced by 0 or capped, so this request's usage is not exact"
	}
	return u
}

// nonNegative returns n, or 0 when n is negative, adding the field to bad.
func nonNegative(n int, field string, bad *[]string) int {
	if n < 0 {
		*bad = append(*bad, fmt.Sprintf("%s %d", field, n))
		return 0
	}
	return n
}
