package ui

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/workbench"
)

func usageAt(hitPct float64, first bool) agent.Usage {
	const prompt = 10000
	hit := int(math.Round(prompt * hitPct / 100))
	return agent.Usage{PromptTokens: prompt, CacheHitTokens: hit, CacheMissTokens: prompt - hit, CacheReported: true, First: first}
}

func TestCacheStateThresholds(t *testing.T) {
	for _, c := range []struct {
		name string
		u    agent.Usage
		want CacheLevel
	}{
		{"0 % is red", usageAt(0, false), CacheRed},
		{"39 % is red", usageAt(39, false), CacheRed},
		{"39.99 % is red", usageAt(39.99, false), CacheRed},
		{"40 % is yellow", usageAt(40, false), CacheYellow},
		{"79 % is yellow", usageAt(79, false), CacheYellow},
		{"79.99 % is yellow", usageAt(79.99, false), CacheYellow},
		{"80 % is green", usageAt(80, false), CacheGreen},
		{"100 % is green", usageAt(100, false), CacheGreen},
		{"cold first request is not red", usageAt(0, true), CacheCold},
		{"no cache field hides the chip", agent.Usage{PromptTokens: 100}, CacheHidden},
		{"no prompt tokens hides the chip", agent.Usage{CacheReported: true}, CacheHidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			if g := CacheStateFor(c.u).Level; g != c.want {
				t.Errorf("got %v; want %v", g, c.want)
			}
		})
	}
}

func TestCacheChipWidget(t *testing.T) {
	test.NewTempApp(t)
	chip := NewCacheChip()
	w := test.NewTempWindow(t, chip)
	_ = w
	for _, c := range []struct {
		u    agent.Usage
		want fyne.ThemeColorName
	}{
		{usageAt(0, true), theme.ColorNameDisabled},
		{usageAt(0, false), theme.ColorNameError},
		{usageAt(39, false), theme.ColorNameError},
		{usageAt(40, false), theme.ColorNameWarning},
		{usageAt(79, false), theme.ColorNameWarning},
		{usageAt(80, false), theme.ColorNameSuccess},
	} {
		chip.Update(c.u)
		if !chip.Visible() {
			t.Fatalf("chip hidden for %+v", c.u)
		}
		if chip.dot.FillColor != theme.Color(c.want) {
			t.Errorf("hit %d/%d first=%v: dot colour %v; want %s", c.u.CacheHitTokens, c.u.PromptTokens, c.u.First, chip.dot.FillColor, c.want)
		}
	}
	chip.Update(agent.Usage{PromptTokens: 10})
	if chip.Visible() {
		t.Error("chip visible although the backend reports no cache field")
	}
	chip.Reset()
	chip.Update(usageAt(50, false))
	chip.Update(usageAt(100, false))
	if d := chip.Details(); !contains([]string{d}, d) || !containsAll(d, "5,000", "10,000 tokens from cache", "Session: 15,000 of 20,000", "75 %") {
		t.Errorf("details = %q", d)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !stringsContains(s, x) {
			return false
		}
	}
	return true
}

func TestGaugeMarksAtThresholds(t *testing.T) {
	test.NewTempApp(t)
	g := NewGauge()
	w := test.NewTempWindow(t, g)
	w.Resize(fyne.NewSize(1000+2*theme.Padding(), 120))
	const window = 1_000_000
	g.SetLevel(842_000, window, false)
	// The engine's thresholds for a known 1M window: 1M − 20k summary
	// reserve − 13k buffer, and the cycle restart at 75 %.
	g.SetThresholds(967_000, 750_000)
	marks := g.Marks()
	if len(marks) != 2 {
		t.Fatalf("marks = %+v; want compact and cycle", marks)
	}
	want := map[string]float32{"compact": 0.967, "cycle": 0.75}
	for _, m := range marks {
		if d := m.Fraction - want[m.Label]; d > 0.0005 || d < -0.0005 {
			t.Errorf("%s mark at %.4f; want %.3f", m.Label, m.Fraction, want[m.Label])
		}
	}
	r := test.WidgetRenderer(g).(*gaugeRenderer)
	width := g.Size().Width
	for i, m := range marks {
		x := r.ticks[i].Position().X + 1
		if d := x - width*m.Fraction; d > 1 || d < -1 {
			t.Errorf("%s tick drawn at x=%.1f; want %.1f", m.Label, x, width*m.Fraction)
		}
	}
	if got := g.Text(); got != "≈ 842k / 1M (84 %)" {
		t.Errorf("text = %q", got)
	}
	if got := GaugeText(84_200, 128_000, true); got != "84.2k / 128k (66 %)" {
		t.Errorf("exact text = %q", got)
	}
}

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

func TestClipForDisplay(t *testing.T) {
	long := make([]byte, 10000)
	for i := range long {
		long[i] = 'x'
	}
	got := clipForDisplay(string(long))
	if len(got) > maxShown+40 || !stringsContains(got, "… 6,000 more chars") {
		t.Errorf("long text clipped to %d chars ending %q", len(got), got[len(got)-30:])
	}
	if got := clipForDisplay("a\x00b"); !stringsContains(got, "binary output") {
		t.Errorf("binary shown as %q", got)
	}
}

func TestMissingDisplayIsAClearError(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	err := displayAvailable(env(nil))
	if runtime.GOOS == "linux" && (err == nil || !strings.Contains(err.Error(), "tally run")) {
		t.Errorf("no display: %v", err)
	}
	if err := displayAvailable(env(map[string]string{"DISPLAY": ":0"})); err != nil {
		t.Errorf("with DISPLAY: %v", err)
	}
	if err := displayAvailable(env(map[string]string{"WAYLAND_DISPLAY": "wayland-0"})); err != nil {
		t.Errorf("with WAYLAND_DISPLAY: %v", err)
	}
}

func TestRebuildRowSaysWhatItCostInCacheTerms(t *testing.T) {
	it := rebuildItem(agent.RebuildInfo{Kind: agent.RebuildCompaction, Reason: "auto compaction",
		TokensBefore: 63_000, TokensAfter: 30_000, MissTokens: 31_500, PaysBackAfter: 3.25})
	for _, want := range []string{"compacted: 63k → 30k tokens", "31.5k tokens billed as misses once", "pays back after 3.2 requests"} {
		if !strings.Contains(it.text, want) {
			t.Errorf("row %q lacks %q", it.text, want)
		}
	}
	if it := rebuildItem(agent.RebuildInfo{Kind: agent.RebuildPurge, TokensBefore: 10, TokensAfter: 5}); strings.Contains(it.text, "misses") {
		t.Errorf("a rewrite that cost nothing in cache terms says it did: %q", it.text)
	}
}
