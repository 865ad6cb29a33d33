package llm

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
	u := Usage{PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens}
	switch {
	case w.PromptCacheHitTokens != nil || w.PromptCacheMissTokens != nil:
		u.CacheReported = true
		if w.PromptCacheHitTokens != nil {
			u.CacheHitTokens = *w.PromptCacheHitTokens
		}
		if w.PromptCacheMissTokens != nil {
			u.CacheMissTokens = *w.PromptCacheMissTokens
		} else {
			u.CacheMissTokens = max(u.PromptTokens-u.CacheHitTokens, 0)
		}
	case w.PromptTokensDetails != nil && w.PromptTokensDetails.CachedTokens != nil:
		u.CacheReported = true
		u.CacheHitTokens = *w.PromptTokensDetails.CachedTokens
		u.CacheMissTokens = max(u.PromptTokens-u.CacheHitTokens, 0)
	}
	return u
}
