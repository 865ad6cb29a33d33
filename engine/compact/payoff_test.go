package compact

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/golden"
)

func TestTargetLimitCeiling(t *testing.T) {
	targets := []struct {
		name              string
		threshold, prefix int
		want              int
	}{
		{"half the room above the prefix", 63_333, 6_000, 6_000 + 28_666},
		{"no prefix: half the threshold", 40_000, 0, 20_000},
		{"a negative prefix counts as none", 40_000, -5, 20_000},
		{"a prefix over the threshold leaves no room", 10_000, 12_000, 10_000},
		{"no threshold, no target", 0, 5_000, 0},
	}
	for _, c := range targets {
		t.Run("target/"+c.name, func(t *testing.T) {
			if got := Target(c.threshold, c.prefix); got != c.want {
				t.Errorf("Target(%d, %d) = %d; want %d", c.threshold, c.prefix, got, c.want)
			}
		})
	}
	t.Run("limit is 10 % under the threshold", func(t *testing.T) {
		if got := Limit(63_333); got != 56_999 {
			t.Errorf("Limit = %d; want 56,999", got)
		}
		if got := Limit(-1); got != 0 {
			t.Errorf("Limit(-1) = %d; want 0", got)
		}
	})
	ceilings := []struct {
		name                       string
		window, threshold, cycleAt int
		want                       int
	}{
		{"128K: the cycle threshold comes first", 128_000, 63_333, 96_000, 96_000},
		{"cycles off: 90 % of the window", 128_000, 63_333, 0, 115_200},
		{"1M: the cycle threshold under the compaction threshold does not count", 1_000_000, 967_000, 750_000, 967_000},
		{"unknown window: the threshold, so compaction never waits", 0, 95_000, 0, 95_000},
		{"a cycle point above 90 % does not raise it", 100_000, 40_000, 95_000, 90_000},
	}
	for _, c := range ceilings {
		t.Run("ceiling/"+c.name, func(t *testing.T) {
			if got := Ceiling(c.window, c.threshold, c.cycleAt); got != c.want {
				t.Errorf("Ceiling(%d, %d, %d) = %d; want %d", c.window, c.threshold, c.cycleAt, got, c.want)
			}
		})
	}
}

func TestHorizon(t *testing.T) {
	cases := []struct {
		name           string
		level, ceiling int
		growth         float64
		want           float64
	}{
		{"requests until the ceiling", 63_333, 96_000, 350, (96_000 - 63_333) / 350.0},
		{"at the ceiling nothing is left", 96_000, 96_000, 350, 0},
		{"over the ceiling nothing is left", 99_000, 96_000, 350, 0},
		{"unknown growth: the default", 63_333, 96_000, 0, DefaultHorizon},
		{"negative growth is unknown", 63_333, 96_000, -3, DefaultHorizon},
		{"NaN growth is unknown", 63_333, 96_000, math.NaN(), DefaultHorizon},
		{"slow growth is capped", 63_333, 96_000, 10, MaxHorizon},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Horizon(c.level, c.ceiling, c.growth); math.Abs(got-c.want) > 1e-9 {
				t.Errorf("Horizon = %v; want %v", got, c.want)
			}
		})
	}
}

func TestMissHitRatio(t *testing.T) {
	if got := MissHitRatio(0.01, 0.3); math.Abs(got-30) > 1e-9 {
		t.Errorf("known prices: %v; want 30", got)
	}
	for _, p := range [][2]float64{{0, 0.3}, {0.01, 0}, {-1, 2}} {
		if got := MissHitRatio(p[0], p[1]); got != defaultMissHitRatio {
			t.Errorf("MissHitRatio(%v, %v) = %v; want the default", p[0], p[1], got)
		}
	}
}

func TestGrowth(t *testing.T) {
	t.Run("no base: unknown", func(t *testing.T) {
		var g Growth
		if got, r := g.PerRequest(50_000, 40), g.Ratio(50_000, 40_000); got != 0 || r != 0 {
			t.Errorf("PerRequest = %v, Ratio = %v", got, r)
		}
	})
	t.Run("measured from the base", func(t *testing.T) {
		var g Growth
		g.Mark(10_000, 8_000, 4)
		if got := g.PerRequest(13_500, 14); got != 350 {
			t.Errorf("PerRequest = %v; want 350", got)
		}
		if got := g.Ratio(13_500, 10_500); got != 1.4 {
			t.Errorf("Ratio = %v; want 1.4 (3,500 billed for 2,500 own)", got)
		}
	})
	t.Run("the prefix does not distort the ratio", func(t *testing.T) {
		// A prefix the provider counts twice as heavy: 4,000 own, 8,000
		// billed; messages count alike.
		var g Growth
		g.Mark(8_000+5_000, 4_000+5_000, 1)
		if got := g.Ratio(8_000+9_000, 4_000+9_000); got != 1 {
			t.Errorf("Ratio = %v; want 1", got)
		}
	})
	t.Run("too few requests or tokens since the base: unknown", func(t *testing.T) {
		var g Growth
		g.Mark(10_000, 8_000, 4)
		if got := g.PerRequest(13_500, 4+minGrowthRequests-1); got != 0 {
			t.Errorf("PerRequest = %v", got)
		}
		if got := g.Ratio(11_000, 8_000+minRatioTokens-1); got != 0 {
			t.Errorf("Ratio = %v", got)
		}
	})
	t.Run("a level that did not grow: unknown", func(t *testing.T) {
		var g Growth
		g.Mark(10_000, 8_000, 4)
		if got, r := g.PerRequest(9_000, 20), g.Ratio(9_000, 12_000); got != 0 || r != 0 {
			t.Errorf("PerRequest = %v, Ratio = %v", got, r)
		}
	})
	t.Run("mark keeps an existing base", func(t *testing.T) {
		var g Growth
		g.Mark(10_000, 8_000, 4)
		g.Mark(12_000, 9_000, 8)
		if g.Level != 10_000 || g.Own != 8_000 || g.Requests != 4 {
			t.Errorf("base moved: %+v", g)
		}
	})
	t.Run("a rebase keeps the last figures until the new base has enough behind it", func(t *testing.T) {
		var g Growth
		g.Mark(10_000, 10_000, 0)
		g.Rebase(20_000, 18_000, 20) // 500 per request, 1.25 per own token; then a rebuild
		g.Mark(8_000, 7_000, 21)
		if got, r := g.PerRequest(8_100, 22), g.Ratio(8_100, 7_100); got != 500 || r != 1.25 {
			t.Errorf("right after the rebase: %v, %v; want the last figures, 500 and 1.25", got, r)
		}
		if got, r := g.PerRequest(11_000, 31), g.Ratio(11_000, 10_000); got != 300 || r != 1 {
			t.Errorf("ten requests later: %v, %v; want 300 and 1", got, r)
		}
	})
	t.Run("nil receivers", func(t *testing.T) {
		var g *Growth
		g.Mark(1, 1, 1)
		g.Rebase(1, 1, 1)
	})
}

// toolHeavy is a session of n tool results of resultTokens each (1,000
// bytes of text apiece, so micro-compaction is allowed past 32 results),
// after one user request, with a reply at the end.
func toolHeavy(n, resultTokens int) Input {
	msgs := []transcript.Message{user("Read every module and report.")}
	toks := []int{20}
	for i := range n {
		c := call(fmt.Sprintf("c%d", i), "read_file", fmt.Sprintf(`{"path":"mod%d.go"}`, i))
		msgs = append(msgs, calls("", c), result(c, filler(fmt.Sprint(i), 1000)))
		toks = append(toks, 20, resultTokens)
	}
	msgs = append(msgs, reply("All modules read."))
	toks = append(toks, 10)
	in := Input{Messages: msgs, Tokens: toks, PrefixTokens: 2_000, Window: 100_000, Now: t0}
	in.Level = in.PrefixTokens + sum(toks)
	return in
}

func TestPlanAuto(t *testing.T) {
	// 40 results of 1,000 tokens: the level is 42,830 against a threshold
	// of 40,000; the target is 21,000 and the limit 36,000.
	base := func() Input {
		in := toolHeavy(40, 1_000)
		in.Threshold = 40_000
		return in
	}
	t.Run("a plan that pays back within the horizon runs", func(t *testing.T) {
		p := PlanAuto(base(), Forecast{Ceiling: 72_000, Growth: 300})
		d := p.Auto
		if d == nil || !d.Run || d.Forced || d.Chosen < 0 {
			t.Fatalf("decision = %+v", d)
		}
		if p.Cache.BreakEven <= 0 || p.Cache.BreakEven >= d.Horizon || p.Cache.Horizon != d.Horizon {
			t.Errorf("break-even %v, horizon %v (on the plan %v)", p.Cache.BreakEven, d.Horizon, p.Cache.Horizon)
		}
		if p.TokensAfter > d.Target {
			t.Errorf("left %d tokens; the target is %d", p.TokensAfter, d.Target)
		}
	})
	t.Run("a plan that would not pay back before the ceiling waits", func(t *testing.T) {
		p := PlanAuto(base(), Forecast{Ceiling: 44_000, Growth: 2_000})
		d := p.Auto
		if d.Run || d.Forced || d.Chosen < 0 || !strings.HasPrefix(d.Reason, "waiting") {
			t.Fatalf("decision = %+v", d)
		}
		if d.Candidates[d.Chosen].Net >= 0 {
			t.Errorf("waiting although the best plan nets %v", d.Candidates[d.Chosen].Net)
		}
	})
	t.Run("at the ceiling the best plan runs even when it does not pay back", func(t *testing.T) {
		p := PlanAuto(base(), Forecast{Ceiling: 42_000, Growth: 2_000})
		d := p.Auto
		if !d.Run || !d.Forced || d.Horizon != 0 || !strings.Contains(d.Reason, "ceiling") {
			t.Fatalf("decision = %+v", d)
		}
	})
	t.Run("one deep compaction beats a trim to the target", func(t *testing.T) {
		p := PlanAuto(base(), Forecast{Ceiling: 72_000, Growth: 300})
		d := p.Auto
		if len(d.Candidates) != 2 || d.Candidates[0].Name != "micro+prune" || d.Candidates[1].Name != LayerSummary {
			t.Fatalf("candidates = %+v", d.Candidates)
		}
		if d.Chosen != 1 || !p.NeedsSummary {
			t.Errorf("chose %+v over %+v", d.Candidates[d.Chosen], d.Candidates)
		}
		cheap := d.Candidates[0]
		if cheap.TokensAfter > d.Target || cheap.TokensAfter < d.Target-1_100 {
			t.Errorf("the trim left %d tokens; it should stop just under the target %d, not at the threshold", cheap.TokensAfter, d.Target)
		}
	})
	t.Run("a trim that rewrites an early message pays for the bust", func(t *testing.T) {
		in := base()
		in.Target = Target(in.Threshold, in.PrefixTokens)
		p := PlanCascade(in)
		if p.NeedsSummary || p.Cache.FirstChanged != 2 {
			t.Fatalf("plan = needs summary %v, first changed %d", p.NeedsSummary, p.Cache.FirstChanged)
		}
		if want := sum(p.Tokens[2:]); p.Cache.InvalidatedTokens != want || p.Cache.MissTokens != want {
			t.Errorf("invalidated %d, miss %d; want every token from message 2 on, %d", p.Cache.InvalidatedTokens, p.Cache.MissTokens, want)
		}
		if want := float64(p.Cache.InvalidatedTokens) * (defaultMissHitRatio - 1); p.Cache.OneOff != want {
			t.Errorf("one-off %v; want %v", p.Cache.OneOff, want)
		}
	})
	t.Run("when the cheap layers cannot reach the target the summary runs instead", func(t *testing.T) {
		// 20 results of 1,500 bytes: under the 32 KB micro-compaction
		// needs, and no duplicates to prune.
		in := toolHeavy(20, 2_000)
		for i := range in.Messages {
			if in.Messages[i].Role == transcript.Tool {
				in.Messages[i].Blocks[0].Text = filler(fmt.Sprint(i), 1_500)
			}
		}
		in.Threshold = 40_000
		p := PlanAuto(in, Forecast{Ceiling: 72_000, Growth: 300})
		d := p.Auto
		if len(d.Candidates) != 1 || d.Candidates[0].Name != LayerSummary || !p.NeedsSummary || !d.Run {
			t.Fatalf("decision = %+v", d)
		}
		if len(layer(p, LayerMicro).Changes)+len(layer(p, layerPrune).Changes) != 0 {
			t.Error("a cheap layer trimmed a little before the summary")
		}
	})
	t.Run("a plan that would leave the level within 10 % of the threshold never runs", func(t *testing.T) {
		in := base()
		for i := range in.Messages {
			if in.Messages[i].Role == transcript.Tool {
				in.Messages[i].Blocks[0].Text = "error: " + in.Messages[i].Blocks[0].Text // every result pinned
			}
		}
		for _, ceiling := range []int{72_000, 42_000} {
			d := PlanAuto(in, Forecast{Ceiling: ceiling, Growth: 300}).Auto
			if d.Run || d.Chosen >= 0 || !strings.Contains(d.Reason, "10 % under the threshold") {
				t.Errorf("ceiling %d: decision = %+v", ceiling, d)
			}
		}
	})
	t.Run("whatever runs leaves room below the threshold", func(t *testing.T) {
		for n := 36; n <= 80; n += 4 {
			in := toolHeavy(n, 1_000)
			in.Threshold = 40_000
			for _, f := range []Forecast{{Ceiling: 72_000, Growth: 300}, {Ceiling: 40_000}} {
				p := PlanAuto(in, f)
				if p.Auto.Run && p.TokensAfter > Limit(in.Threshold) {
					t.Errorf("%d results, %+v: runs and leaves %d tokens; the limit is %d", n, f, p.TokensAfter, Limit(in.Threshold))
				}
			}
		}
	})
	t.Run("a forced input is planned as an automatic one", func(t *testing.T) {
		in := base()
		in.Force = true
		if p := PlanAuto(in, Forecast{Ceiling: 44_000, Growth: 2_000}); p.Force || p.Auto.Run {
			t.Errorf("force leaked into the automatic plan: %+v", p.Auto)
		}
	})
	t.Run("preview", func(t *testing.T) {
		in := base()
		in.HitPrice, in.MissPrice = 0.028, 0.84
		golden.Check(t, "plan_auto.txt", PlanAuto(in, Forecast{Ceiling: 72_000, Growth: 300}).Text())
	})
}

func TestInputInProviderUnits(t *testing.T) {
	// The provider counts 1.5 times what the planner estimates: a layer
	// removing n estimated tokens lowers the level by 1.5 n, whether the
	// ratio is measured or derived from the level.
	for _, measured := range []bool{false, true} {
		in := toolHeavy(40, 1_000)
		in.Level = in.Level * 3 / 2
		if measured {
			in.Level += 5_000 // a prefix the provider counts much heavier
			in.Ratio = 1.5
		}
		in.Threshold = in.Level - 2_800
		checkProviderUnits(t, in)
	}
}

func checkProviderUnits(t *testing.T, in Input) {
	t.Helper()
	p := PlanCascade(in)
	pr := layer(p, LayerMicro)
	removed := 0
	for _, c := range pr.Changes {
		removed += c.TokensBefore - c.TokensAfter
	}
	if got, want := p.TokensBefore-p.TokensAfter, removed*3/2; math.Abs(float64(got-want)) > float64(len(pr.Changes)) {
		t.Errorf("the level fell by %d for %d estimated tokens removed; want about %d", got, removed, want)
	}
	if len(pr.Changes) != 2 {
		t.Errorf("micro cleared %d results; 2,800 provider tokens take 2 (963 estimated tokens each, 1,444 to the provider)", len(pr.Changes))
	}
}
