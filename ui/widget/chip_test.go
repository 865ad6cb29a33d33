package widget

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/engine/ledger"
)

// rowAt is a request of 10,000 prompt tokens with hitPct of them from the
// cache.
func rowAt(hitPct float64) ledger.Row {
	const prompt = 10000
	hit := int(math.Round(prompt * hitPct / 100))
	return ledger.Row{PromptTokens: prompt, CacheHitTokens: hit, CacheMissTokens: prompt - hit, CacheReported: true}
}

func TestCacheStateThresholds(t *testing.T) {
	for _, c := range []struct {
		name     string
		r        ledger.Row
		first    bool
		want     CacheLevel
		wantText string
	}{
		{"0 % is red", rowAt(0), false, CacheRed, "Cache 0 %"},
		{"39 % is red", rowAt(39), false, CacheRed, "Cache 39 %"},
		{"39.94 % shows 39.9 % and is red", rowAt(39.94), false, CacheRed, "Cache 39.9 %"},
		{"39.96 % shows 40 % and is yellow", rowAt(39.96), false, CacheYellow, "Cache 40 %"},
		{"40 % is yellow", rowAt(40), false, CacheYellow, "Cache 40 %"},
		{"79.94 % shows 79.9 % and is yellow", rowAt(79.94), false, CacheYellow, "Cache 79.9 %"},
		{"79.96 % shows 80 % and is green", rowAt(79.96), false, CacheGreen, "Cache 80 %"},
		{"80 % is green", rowAt(80), false, CacheGreen, "Cache 80 %"},
		{"99.97 % shows 100 %", rowAt(99.97), false, CacheGreen, "Cache 100 %"},
		{"cold first request is not red", rowAt(0), true, CacheCold, "Cache cold · 0 %"},
		{"a cold first request shows the same number", rowAt(79.96), true, CacheCold, "Cache cold · 80 %"},
		{"no cache field hides the chip", ledger.Row{PromptTokens: 100}, false, CacheHidden, ""},
		{"no prompt tokens hides the chip", ledger.Row{CacheReported: true}, false, CacheHidden, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := CacheStateFor(c.r, c.first)
			if s.Level != c.want || s.Text != c.wantText {
				t.Errorf("got %v %q; want %v %q", s.Level, s.Text, c.want, c.wantText)
			}
		})
	}
}

func TestCacheChipWidget(t *testing.T) {
	test.NewTempApp(t)
	chip := NewCacheChip()
	test.NewTempWindow(t, chip)
	for _, c := range []struct {
		r     ledger.Row
		first bool
		want  fyne.ThemeColorName
	}{
		{rowAt(0), true, theme.ColorNameDisabled},
		{rowAt(0), false, theme.ColorNameError},
		{rowAt(39), false, theme.ColorNameError},
		{rowAt(40), false, theme.ColorNameWarning},
		{rowAt(79), false, theme.ColorNameWarning},
		{rowAt(80), false, theme.ColorNameSuccess},
	} {
		chip.Set(c.r, c.first)
		if !chip.Visible() {
			t.Fatalf("chip hidden for %+v", c.r)
		}
		if chip.dot.FillColor != theme.Color(c.want) {
			t.Errorf("hit %d/%d first=%v: dot colour %v; want %s", c.r.CacheHitTokens, c.r.PromptTokens, c.first, chip.dot.FillColor, c.want)
		}
	}
	chip.Set(ledger.Row{PromptTokens: 10}, false)
	if chip.Visible() {
		t.Error("chip visible although the backend reports no cache field")
	}
	chip.Reset()
	rows := []ledger.Row{rowAt(50), rowAt(100)}
	chip.SetSession(ledger.Sum(rows, ledger.OnePrice(ledger.Price{}, false)))
	chip.Set(rows[1], false)
	if d := chip.Details(); !containsAll(d, "10,000 tokens from cache, 0 not cached", "Session: 15,000 of 20,000", "75 %") {
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
