package widget

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/engine/agent"
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
	if d := chip.Details(); !containsAll(d, "5,000", "10,000 tokens from cache", "Session: 15,000 of 20,000", "75 %") {
		t.Errorf("details = %q", d)
	}
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
