package compact

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/golden"
)

func layer(p Plan, name string) LayerReport {
	for _, l := range p.Layers {
		if l.Name == name {
			return l
		}
	}
	return LayerReport{}
}

func TestPlanCascade(t *testing.T) {
	t.Run("under the threshold nothing changes", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = in.Level + 1
		p := PlanCascade(in)
		if p.NeedsSummary || p.TokensAfter != p.TokensBefore || p.Cache.InvalidatedTokens != 0 {
			t.Errorf("plan changed something: %+v", p.Cache)
		}
		if len(p.Layers) != 6 {
			t.Errorf("%d layer reports; want 6", len(p.Layers))
		}
	})
	t.Run("prune is enough", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = in.Level - 1000
		p := PlanCascade(in)
		if pr := layer(p, layerPrune); !pr.Ran || !pr.Enough || len(pr.Changes) != 1 || pr.Changes[0].Index != 2 {
			t.Fatalf("prune = %+v", pr)
		}
		if p.NeedsSummary || layer(p, LayerSummary).Skipped == "" {
			t.Error("summary planned although prune was enough")
		}
		if p.Cache.FirstChanged != 2 || p.Cache.SystemChanges || p.Cache.SavedPerRequest <= 0 {
			t.Errorf("cache = %+v", p.Cache)
		}
		checkLog(t, "plan", p.Messages)
	})
	t.Run("summary needed over the pure layers", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = 4000
		p := PlanCascade(in)
		if !p.NeedsSummary || len(p.Summarize) == 0 {
			t.Fatalf("no summary planned: %+v", p.Layers)
		}
		pinned := PinnedIndexes(p.Pins)
		if !slices.Equal(p.Keep, pinned) {
			t.Errorf("keep %v; pinned %v", p.Keep, pinned)
		}
		all := append(slices.Clone(p.Keep), p.Summarize...)
		slices.Sort(all)
		if len(all) != len(in.Messages) || all[len(all)-1] != len(in.Messages)-1 {
			t.Errorf("keep + summarise do not partition the log: %v", all)
		}
		if !p.Cache.SystemChanges || p.Cache.InvalidatedTokens != p.TokensAfter {
			t.Errorf("cache = %+v", p.Cache)
		}
	})
	t.Run("memory stands in inside the band", func(t *testing.T) {
		in := sessionInput()
		in.Tokens[9] = 20_000
		in.Level = in.PrefixTokens + sum(in.Tokens)
		in.Threshold = 10_000
		in.Memory = "- cache eviction must stay LRU\n- tests live in pkg/cache"
		in.Now = t0.Add(5 * time.Minute)
		p := PlanCascade(in)
		if m := layer(p, LayerMemory); !m.Ran {
			t.Fatalf("memory skipped: %s", m.Skipped)
		}
		if p.NeedsSummary || p.SummarySource != LayerMemory || p.Summary != in.Memory {
			t.Errorf("plan = needs %v source %q", p.NeedsSummary, p.SummarySource)
		}
	})
	t.Run("memory outside the band falls through to the summary", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = 4000
		in.Memory = "notes"
		p := PlanCascade(in)
		if m := layer(p, LayerMemory); m.Ran || !strings.Contains(m.Skipped, "10,000–40,000") {
			t.Errorf("memory = %+v", m)
		}
		if !p.NeedsSummary {
			t.Error("no summary planned")
		}
	})
	t.Run("pins too big: emergency forecast", func(t *testing.T) {
		in := sessionInput()
		for i := range in.Tokens {
			in.Tokens[i] = 5000
		}
		in.Level = in.PrefixTokens + sum(in.Tokens)
		in.Threshold = 20_000
		p := PlanCascade(in)
		em := layer(p, layerEmergency)
		if !em.Estimated || len(em.Changes) == 0 {
			t.Fatalf("emergency = %+v", em)
		}
	})
	t.Run("force runs the summary under the threshold", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = in.Level * 2
		in.Force = true
		if p := PlanCascade(in); !p.NeedsSummary {
			t.Errorf("forced plan did not summarise: %+v", p.Layers)
		}
	})
	t.Run("empty input", func(t *testing.T) {
		p := PlanCascade(Input{})
		_ = p.Text()
		if p.NeedsSummary {
			t.Error("empty input needs a summary")
		}
	})
	t.Run("input is not modified", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = 4000
		in.Now = t0.Add(3 * time.Hour)
		want := in.Messages[2].Text()
		wantTok := slices.Clone(in.Tokens)
		PlanCascade(in)
		if in.Messages[2].Text() != want || !slices.Equal(in.Tokens, wantTok) {
			t.Error("PlanCascade modified its input")
		}
	})
}

func TestPlanGolden(t *testing.T) {
	t.Run("summary", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = 4000
		in.Now = t0.Add(90 * time.Minute)
		p := PlanCascade(in)
		golden.Check(t, "plan_summary.txt", p.Text())
		golden.Check(t, "plan_summary.json", string(p.JSON())+"\n")
	})
	t.Run("prune enough", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = in.Level - 1000
		in.HitPrice, in.MissPrice = 0.028, 0.28
		golden.Check(t, "plan_prune.txt", PlanCascade(in).Text())
	})
	t.Run("nothing to do", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = in.Level + 1
		golden.Check(t, "plan_nothing.txt", PlanCascade(in).Text())
	})
	t.Run("deterministic", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = 4000
		first, second := PlanCascade(in).Text(), PlanCascade(in).Text()
		if first != second {
			t.Error("two previews of one input differ")
		}
	})
}

func TestCacheCost(t *testing.T) {
	cases := []struct {
		name                      string
		invalidated, call, saved  int
		hit, miss                 float64
		wantOneOff, wantBreakEven float64
	}{
		{"nothing invalidated", 0, 0, 1000, 0, 0, 0, 0},
		{"nothing saved", 1000, 0, 0, 0, 0, 9000, -1},
		{"saved pays back in 9 requests", 10_000, 0, 10_000, 0, 0, 90_000, 9},
		{"equal prices never cost", 10_000, 0, 1000, 1, 1, 0, 0},
		{"the summary call is billed at the miss price", 10_000, 5_000, 10_000, 0.01, 0.3, 10_000*29 + 5_000*30, 44},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NewCacheCost(c.invalidated, c.call, c.call, c.saved, c.hit, c.miss)
			if math.Abs(got.OneOff-c.wantOneOff) > 1e-6 || math.Abs(got.BreakEven-c.wantBreakEven) > 1e-9 {
				t.Errorf("one-off %v, break-even %v; want %v, %v", got.OneOff, got.BreakEven, c.wantOneOff, c.wantBreakEven)
			}
			if got.MissTokens != c.invalidated+c.call {
				t.Errorf("miss tokens %d; want %d", got.MissTokens, c.invalidated+c.call)
			}
		})
	}
	t.Run("dollars", func(t *testing.T) {
		c := CacheCost{InvalidatedTokens: 1_000_000, SavedPerRequest: 500_000}
		one, per := c.Dollars(0.1, 1.0)
		if math.Abs(one-0.9) > 1e-9 || math.Abs(per-0.05) > 1e-9 {
			t.Errorf("Dollars = %v, %v; want 0.9, 0.05", one, per)
		}
		if one, per := c.Dollars(-1, -1); one != 0 || per != 0 {
			t.Errorf("negative prices = %v, %v", one, per)
		}
	})
	t.Run("plan break-even survives JSON", func(t *testing.T) {
		in := sessionInput()
		in.Threshold = 4000
		var back Plan
		if err := json.Unmarshal(PlanCascade(in).JSON(), &back); err != nil {
			t.Fatal(err)
		}
		if back.Cache.MissHitRatio != defaultMissHitRatio {
			t.Errorf("ratio = %v", back.Cache.MissHitRatio)
		}
	})
}

// TestEveryLayerKeepsTheLogValid runs every layer and Apply over logs cut
// at every length and checks pairing and the plain user text each time.
func TestEveryLayerKeepsTheLogValid(t *testing.T) {
	full := sessionInput()
	for n := 1; n <= len(full.Messages); n++ {
		msgs := full.Messages[:n]
		if len(transcript.Unanswered(msgs)) > 0 {
			continue
		}
		in := Input{Messages: msgs, Tokens: full.Tokens[:n], PrefixTokens: 100, Threshold: 150,
			Now: t0.Add(2 * time.Hour), WorkingSet: full.WorkingSet, Memory: "m",
			Reminders: ReminderInputs{Checklist: []string{"[~] fix eviction"}, WorkingSet: []string{"pkg/cache/lru.go"}}}
		pins := Pins(in)
		a, _ := Intake(in, pins)
		checkLog(t, "intake", a.Messages)
		b, _ := Micro(a, pins)
		checkLog(t, "micro", b.Messages)
		c, _ := Prune(b, pins)
		checkLog(t, "prune", c.Messages)
		p := PlanCascade(in)
		checkLog(t, "plan", p.Messages)
		res := Apply(in, p, "the summary")
		checkLog(t, "apply", res.Messages)
		kept, _ := Truncate(res.Messages, nil, 10)
		checkLog(t, "emergency", kept)
	}
}
