// Package ledger keeps the per-request usage record of a session and turns
// it into money: what each request cost at the model's prices, what a
// client without a prefix cache would have paid, and the session totals.
package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/prompt"
)

// Price is a model's list price in US dollars per million tokens.
type Price struct {
	CacheHit   float64 `json:"cache_hit"`
	CacheMiss  float64 `json:"cache_miss"`
	Completion float64 `json:"completion"`
}

// Cost returns the dollars for the given token counts.
func (p Price) Cost(hit, miss, completion int) float64 {
	return (float64(hit)*p.CacheHit + float64(miss)*p.CacheMiss + float64(completion)*p.Completion) / 1e6
}

// Row is the stored usage record of one request.
type Row struct {
	Request          int       `json:"request"`
	Time             time.Time `json:"time"`
	Model            string    `json:"model"`
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	CacheHitTokens   int       `json:"cache_hit_tokens"`
	CacheMissTokens  int       `json:"cache_miss_tokens"`
	CacheReported    bool      `json:"cache_reported"`
	DurationMS       int64     `json:"duration_ms"`
	Messages         int       `json:"messages"`
	// ContextTokens is the water level after the response.
	ContextTokens int `json:"context_tokens,omitempty"`
	// Kind says what the request was for: KindTurn ("") for a turn, the
	// others for the engine's own calls.
	Kind Kind `json:"kind,omitempty"`
	// Drift is set when this request's prefix differed from the last one.
	Drift *prompt.Drift `json:"drift,omitempty"`
	// Rebuild names a log rewrite (compaction, cycle) just before it.
	Rebuild string `json:"rebuild,omitempty"`
	// CacheRule is the provider cache rule the session's cost estimates
	// (placement, compaction forecasts) assumed for this request.
	CacheRule CacheRule `json:"cache_rule,omitempty"`
	// Subagent is the ID of the sub-agent that made a KindSubagent
	// request, "" for every other kind.
	Subagent string `json:"subagent,omitempty"`
	// Repin names a switch of model or endpoint just before this request,
	// "old → new": the new model's provider cache starts empty, so this
	// request's prompt is billed as a miss.
	Repin string `json:"repin,omitempty"`
	// Fallback names a fallback this request made when its model failed
	// for good, "old → new: why": the new provider's cache starts empty,
	// so its prompt is billed as a miss; Model is the model that answered.
	Fallback string `json:"fallback,omitempty"`
	// Effort is the reasoning effort the request was sent with ("": the
	// provider's default).
	Effort string `json:"effort,omitempty"`
}

// Served returns r as served: by model when not "" (a fallback answered,
// so the row is priced at its prices), after the fallback named (see
// Row.Fallback), with the effort sent.
func (r Row) Served(model, fallback, effort string) Row {
	if model != "" {
		r.Model = model
	}
	r.Fallback, r.Effort = fallback, effort
	return r
}

// CacheRule is how a provider's prefix cache matches a request.
type CacheRule string

// The cache rules.
const (
	// RuleBlocks: any common prefix with an earlier request hits, in
	// blocks (OpenAI, vLLM, llama.cpp, DeepSeek before V4).
	RuleBlocks CacheRule = "blocks"
	// RuleUnits: only whole persisted prefix units hit — the end of each
	// request's input and output, the common prefix of two requests, and
	// fixed intervals (DeepSeek V4).
	RuleUnits CacheRule = "units"
)

// RuleFor is the cache rule of the provider at baseURL: units for
// DeepSeek's API, blocks for every other OpenAI-compatible server.
func RuleFor(baseURL string) CacheRule {
	if strings.Contains(strings.ToLower(baseURL), "deepseek.com") {
		return RuleUnits
	}
	return RuleBlocks
}

// ParseCacheRule reads a rule name; "" (automatic) gives the rule of the
// provider at baseURL.
func ParseCacheRule(s, baseURL string) (CacheRule, error) {
	switch CacheRule(s) {
	case "":
		return RuleFor(baseURL), nil
	case RuleBlocks, RuleUnits:
		return CacheRule(s), nil
	}
	return "", fmt.Errorf("cache rule %q is not blocks or units", s)
}

// Describe says in a few words what the rule means.
func (r CacheRule) Describe() string {
	if r == RuleUnits {
		return "whole persisted prefix units (DeepSeek V4)"
	}
	return "any common prefix, in blocks"
}

// Kind is what a request was for.
type Kind string

// Row kinds.
const (
	KindTurn    Kind = ""        // a request of a user turn
	KindWarmUp  Kind = "warmup"  // the cache warm-up of a new session
	KindSummary Kind = "summary" // a compaction summary
	KindBrief   Kind = "brief"   // a cycle's hand-off brief
	// KindSubagent is a request of a sub-agent (the task tool's child),
	// counted in its parent session's totals; Row.Subagent names the child.
	KindSubagent Kind = "subagent"
	// KindMemory is a request for memory entries over the session's
	// conversation (see package memory), made on the user's request.
	KindMemory Kind = "memory"
)

// miss returns the uncached prompt tokens, treating a backend that reports
// no cache field as all-miss.
func (r Row) miss() int {
	if !r.CacheReported {
		return r.PromptTokens
	}
	if r.CacheMissTokens > 0 || r.CacheHitTokens == 0 {
		return r.CacheMissTokens
	}
	return r.PromptTokens - r.CacheHitTokens
}

// HitRatio is the share of this request's prompt served from the cache.
func (r Row) HitRatio() float64 {
	if r.PromptTokens == 0 {
		return 0
	}
	return float64(r.CacheHitTokens) / float64(r.PromptTokens)
}

// Cost is what this request cost at p.
func (r Row) Cost(p Price) float64 { return p.Cost(r.CacheHitTokens, r.miss(), r.CompletionTokens) }

// ZeroCacheCost is what a client that never hits the cache would have paid.
func (r Row) ZeroCacheCost(p Price) float64 { return p.Cost(0, r.PromptTokens, r.CompletionTokens) }

// Totals summarise a session's rows.
type Totals struct {
	Requests      int     `json:"requests"`
	Prompt        int     `json:"prompt_tokens"`
	Hit           int     `json:"cache_hit_tokens"`
	Miss          int     `json:"cache_miss_tokens"`
	Completion    int     `json:"completion_tokens"`
	HitRatio      float64 `json:"hit_ratio"`
	Priced        bool    `json:"priced"` // false: no price known, costs are not shown
	Cost          float64 `json:"cost_usd"`
	ZeroCacheCost float64 `json:"zero_cache_cost_usd"`
	Drifts        int     `json:"drifts"`   // unbooked prefix changes
	Rebuilds      int     `json:"rebuilds"` // compactions and cycles
}

// PriceBook gives a model's price and whether one is known.
type PriceBook func(model string) (Price, bool)

// OnePrice is a PriceBook that prices every model at p, or none when ok is
// false.
func OnePrice(p Price, ok bool) PriceBook {
	return func(string) (Price, bool) { return p, ok }
}

// Cost is the one cost function of Tally: what rows cost, each request at
// its own model's price from prices (cache hits at the hit price, misses at
// the miss price, a backend that reports no cache field as all misses). It
// reports known false, and a zero cost, when any row's model has no price:
// a partial sum would understate the cost, so it is shown as "n/a". The
// footer, the chart, `tally inspect --ledger` and the compaction preview
// all price through it.
func Cost(rows []Row, prices PriceBook) (cost, zeroCache float64, known bool) {
	for _, r := range rows {
		p, ok := prices(r.Model)
		if !ok {
			return 0, 0, false
		}
		cost += r.Cost(p)
		zeroCache += r.ZeroCacheCost(p)
	}
	return cost, zeroCache, true
}

// Sum adds up rows, pricing them with prices (see Cost).
func Sum(rows []Row, prices PriceBook) Totals {
	t := Totals{}
	t.Cost, t.ZeroCacheCost, t.Priced = Cost(rows, prices)
	for _, r := range rows {
		t.Requests++
		t.Prompt += r.PromptTokens
		t.Hit += r.CacheHitTokens
		t.Miss += r.miss()
		t.Completion += r.CompletionTokens
		if r.Drift != nil && !r.Drift.Booked {
			t.Drifts++
		}
		if r.Rebuild != "" {
			t.Rebuilds++
		}
	}
	if t.Prompt > 0 {
		t.HitRatio = float64(t.Hit) / float64(t.Prompt)
	}
	return t
}
