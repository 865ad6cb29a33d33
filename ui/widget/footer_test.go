package widget

import (
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/workbench"
)

func TestFooterParts(t *testing.T) {
	now := time.Now()
	s := FooterState{Model: "deepseek-chat", RetryAt: now.Add(2500 * time.Millisecond), RetryAttempt: 2, RetryMax: 5,
		Cost: 0.0123, CostKnown: true, LastDuration: 1800 * time.Millisecond, Run: Running(7, 50, "")}
	want := "deepseek-chat · retry in 3 s (2 of 5) · cost $0.0123 · last request 1.8 s · running step 7/50"
	if got := s.Text(now); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	s = FooterState{Model: "mystery", Run: RunState{}}
	if got := s.Text(now); got != "mystery · cost n/a · idle" {
		t.Errorf("unknown price: %q", got)
	}
	rows := []ledger.Row{{Model: "deepseek-chat", PromptTokens: 1000, CacheHitTokens: 900, CacheMissTokens: 100, CompletionTokens: 10, CacheReported: true}}
	if v, _, ok := ledger.Cost(rows, workbench.Settings{}.PriceFor); !ok || v <= 0 {
		t.Errorf("ledger cost = %v, %v", v, ok)
	}
	if _, _, ok := ledger.Cost([]ledger.Row{{Model: "unknown-x"}}, workbench.Settings{}.PriceFor); ok {
		t.Error("cost known for a model without a price")
	}
}
