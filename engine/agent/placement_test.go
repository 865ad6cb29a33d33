package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
)

// missEquivalent is the input cost of a run in miss-equivalent tokens when
// a miss costs ratio times a hit (DeepSeek V4: 30, or 10).
func missEquivalent(s llmtest.Stats, ratio float64) float64 {
	return float64(s.Prompt-s.Hit) + float64(s.Hit)/ratio
}

// placementTable runs the 300-request coding session for every status
// placement under both simulated cache rules and returns the runs.
func placementTable(tb testing.TB) map[llmtest.CacheRule]map[status.Placement]cacheRun {
	out := map[llmtest.CacheRule]map[status.Placement]cacheRun{}
	for _, rule := range []llmtest.CacheRule{llmtest.CacheLCP, llmtest.CacheUnits} {
		out[rule] = map[status.Placement]cacheRun{}
		for _, p := range []status.Placement{status.Tail, status.Append, status.OnChange} {
			out[rule][p] = runSessionWith(tb, 30, 10, sessionRun{placement: p, rule: rule})
		}
	}
	return out
}

// formatPlacementTable renders the runs as the README's table.
func formatPlacementTable(runs map[llmtest.CacheRule]map[status.Placement]cacheRun) string {
	var b strings.Builder
	b.WriteString("| cache rule | placement | hit / ideal | prompt tokens | input cost 1:30 | input cost 1:10 |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, rule := range []llmtest.CacheRule{llmtest.CacheLCP, llmtest.CacheUnits} {
		for _, p := range []status.Placement{status.Tail, status.Append, status.OnChange} {
			s := runs[rule][p].stats
			fmt.Fprintf(&b, "| %s | %s | %.2f %% | %d | %.0fK | %.0fK |\n", rule, p, 100*float64(s.Hit)/float64(s.Ideal), s.Prompt,
				missEquivalent(s, 30)/1e3, missEquivalent(s, 10)/1e3)
		}
	}
	return b.String()
}

// TestStatusPlacementUnderBothCacheRules measures every placement under
// the block (LCP) rule and DeepSeek V4's unit rule on the 300-request
// session, and holds each rule's default placement (see
// status.DefaultPlacement) to what it promises: the cheapest input of the three
// under its rule, and at least 99.5 % of the ideal hit tokens.
func TestStatusPlacementUnderBothCacheRules(t *testing.T) {
	if testing.Short() {
		t.Skip("six 300-request sessions")
	}
	t.Parallel() // a long measured session: the others run beside it
	runs := placementTable(t)
	t.Logf("\n%s", formatPlacementTable(runs))
	for _, rule := range []llmtest.CacheRule{llmtest.CacheLCP, llmtest.CacheUnits} {
		def := status.DefaultPlacement(rule == llmtest.CacheUnits)
		got := runs[rule][def].stats
		if got.Accepted != 300 {
			t.Fatalf("%s: %d requests, want 300", rule, got.Accepted)
		}
		if r := float64(got.Hit) / float64(got.Ideal); r < 0.995 {
			t.Errorf("%s: the default placement %s reached %.2f %% of the ideal hit tokens; want >= 99.5 %%", rule, def, 100*r)
		}
		for _, p := range []status.Placement{status.Tail, status.Append, status.OnChange} {
			if c, d := missEquivalent(runs[rule][p].stats, 30), missEquivalent(got, 30); c < d {
				t.Errorf("%s: %s costs %.0f miss-equivalent tokens, less than the default %s's %.0f", rule, p, c, def, d)
			}
		}
		if on, tail := got.Prompt, runs[rule][status.Tail].stats.Prompt; float64(on) > 1.05*float64(tail) {
			t.Errorf("%s: the default %s sent %d prompt tokens, more than 105 %% of tail's %d", rule, def, on, tail)
		}
	}
}
