package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/internal/text"
)

// budgetRun is one run of the long session with a context budget.
type budgetRun struct {
	window, keep int
	ratio        float64
	run          longRun
	// levels are the compaction thresholds the session reported after
	// each turn, deduplicated in order.
	levels []int
}

// cost is the run's input cost in hit-price units at its own ratio.
func (b budgetRun) cost() float64 {
	s := b.run.stats
	return float64(s.Hit) + b.ratio*float64(s.Prompt-s.Hit)
}

// maxPrompt is the largest prompt the server was sent.
func (b budgetRun) maxPrompt() int {
	m := 0
	for _, q := range b.run.requests {
		m = max(m, q.Prompt)
	}
	return m
}

// runLongBudget drives the long session through Tally in a window, with
// the provider billing a miss at ratio hits (Tally is told these prices)
// and Config.KeepUnder set to keep; edits change the config further.
func runLongBudget(tb testing.TB, rule llmtest.CacheRule, window int, ratio float64, keep int, edits ...func(*Config)) budgetRun {
	tb.Helper()
	s, srv, rec := newLongSession(tb, rule, func(cfg *Config) {
		cfg.ContextWindow, cfg.MissPrice, cfg.KeepUnder = window, longHitPrice*ratio, keep
		for _, edit := range edits {
			edit(cfg)
		}
	})
	out := budgetRun{window: window, keep: keep, ratio: ratio}
	for turn := 1; turn <= longTurns; turn++ {
		runCodingTurns(tb, s, srv, 1)
		if c := s.Snapshot().CompactAt; len(out.levels) == 0 || out.levels[len(out.levels)-1] != c {
			out.levels = append(out.levels, c)
		}
	}
	out.run = longRun{stats: srv.Stats(), requests: srv.Requests()}
	out.run.threshold = s.Snapshot().CompactAt
	for _, e := range rec.kinds(EventRebuild) {
		out.run.rebuilds = append(out.run.rebuilds, *e.Rebuild)
	}
	out.run.afterAuto = billedAfter(tb, s, "auto compaction")
	return out
}

// keepName names a KeepUnder setting for the log.
func keepName(keep int) string {
	switch keep {
	case rewrite.KeepAuto:
		return "price-aware"
	case 0:
		return "old thresholds"
	}
	return fmt.Sprintf("keep under %d", keep)
}

// TestContextBudgetSideBySide runs the long session in a 128K and a 1M
// window, with the old thresholds and with the price-aware level, at a
// miss price of 10 and of 30 hits, and logs the table of the README. The
// runs are deterministic. The price-aware 1M run must cost less than the
// old one and at most 1.1 × the price-aware 128K run (what the user's
// window choice costs); the 128K run no more than with the old
// thresholds; and the level may change only when the growth is first
// measured and at a compaction.
//
//	go test ./engine/agent -run TestContextBudgetSideBySide -v
func TestContextBudgetSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("300-request sessions")
	}
	t.Parallel() // a long measured session: the others run beside it
	rule := llmtest.CacheUnits
	var rows []string
	for _, ratio := range []float64{10, 30} {
		var autos []budgetRun
		for _, window := range []int{128_000, 1_000_000} {
			old := runLongBudget(t, rule, window, ratio, 0)
			auto := runLongBudget(t, rule, window, ratio, rewrite.KeepAuto)
			autos = append(autos, auto)
			for _, r := range []budgetRun{old, auto} {
				s := r.run.stats
				row := fmt.Sprintf("| %s | 1:%.0f | %s | %s | %s | %.2f %% | %d | %s | **%s** |",
					windowName(r.window), r.ratio, keepName(r.keep), levelsText(r.levels), text.Thousands(s.Prompt),
					100*float64(s.Hit)/float64(s.Prompt), len(r.run.afterAuto), text.Thousands(r.maxPrompt()), text.Thousands(int(r.cost())))
				rows = append(rows, row)
			}
			if window >= 1_000_000 && auto.cost() >= old.cost() {
				t.Errorf("1M at 1:%.0f: the price-aware run costs %.0f, not less than the old %.0f", ratio, auto.cost(), old.cost())
			}
			if window < 1_000_000 && auto.cost() > old.cost() {
				t.Errorf("128K at 1:%.0f: the price-aware run costs %.0f, more than the old %.0f", ratio, auto.cost(), old.cost())
			}
			if n, c := len(auto.levels), len(auto.run.afterAuto); n > c+2 {
				t.Errorf("%s at 1:%.0f: the level took %d values (%s) over %d compactions; want at most the window's, the first measured and one per compaction",
					windowName(window), ratio, n, levelsText(auto.levels), c)
			}
			t.Logf("%s at 1:%.0f: price-aware %.0f vs old %.0f hit-units (%.2f×)", windowName(window), ratio, auto.cost(), old.cost(), auto.cost()/old.cost())
		}
		if r := autos[1].cost() / autos[0].cost(); r > 1.1 {
			t.Errorf("1:%.0f: the price-aware 1M run costs %.2f× the 128K one; want at most 1.1×", ratio, r)
		} else {
			t.Logf("1:%.0f: the price-aware 1M run costs %.3f× the 128K one", ratio, r)
		}
	}
	t.Logf("\n| window | miss:hit | compaction level | levels used | prompt tokens | hit | compactions | largest prompt | input cost (hit-token units) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n%s", strings.Join(rows, "\n"))
}

func windowName(w int) string {
	if w >= 1_000_000 {
		return fmt.Sprintf("%dM", w/1_000_000)
	}
	return fmt.Sprintf("%dK", w/1_000)
}

// levelsText lists the compaction levels a run went through.
func levelsText(levels []int) string {
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = text.Thousands(l)
	}
	return strings.Join(parts, " → ")
}
