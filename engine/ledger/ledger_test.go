package ledger

import (
	"math"
	"testing"

	"github.com/tally-dev/tally/engine/prompt"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestSum(t *testing.T) {
	p := Price{CacheHit: 0.028, CacheMiss: 0.28, Completion: 0.42}
	rows := []Row{
		{PromptTokens: 10_000, CacheMissTokens: 10_000, CacheReported: true, CompletionTokens: 100},
		{PromptTokens: 12_000, CacheHitTokens: 9_984, CacheMissTokens: 2_016, CacheReported: true, CompletionTokens: 50, Drift: &prompt.Drift{Changed: true}},
		{PromptTokens: 5_000, CompletionTokens: 10, Rebuild: "compaction", Drift: &prompt.Drift{Changed: true, Booked: true}}, // no cache field
	}
	tot := Sum(rows, OnePrice(p, true))
	if tot.Prompt != 27_000 || tot.Hit != 9_984 || tot.Miss != 17_016 || tot.Completion != 160 {
		t.Errorf("token totals %+v", tot)
	}
	wantCost := (9_984*0.028 + 17_016*0.28 + 160*0.42) / 1e6
	wantZero := (27_000*0.28 + 160*0.42) / 1e6
	if !near(tot.Cost, wantCost) || !near(tot.ZeroCacheCost, wantZero) {
		t.Errorf("cost %.8f / %.8f; want %.8f / %.8f", tot.Cost, tot.ZeroCacheCost, wantCost, wantZero)
	}
	if tot.Drifts != 1 || tot.Rebuilds != 1 {
		t.Errorf("markers: %d drifts, %d rebuilds", tot.Drifts, tot.Rebuilds)
	}
	if u := Sum(rows, OnePrice(Price{}, false)); u.Priced || u.Cost != 0 {
		t.Errorf("unpriced totals show a cost: %+v", u)
	}
	if r := (Row{PromptTokens: 100, CacheHitTokens: 64, CacheReported: true}); r.miss() != 36 || !near(r.HitRatio(), 0.64) {
		t.Errorf("miss derived from hit: %d, ratio %.2f", r.miss(), r.HitRatio())
	}
}
