package widget

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

func TestChartGeometry(t *testing.T) {
	rows := []ledger.Row{
		{Request: 1, ContextTokens: 10_000, PromptTokens: 10_000, CacheReported: true, CacheHitTokens: 0},
		{Kind: ledger.KindWarmUp, PromptTokens: 5000},
		{Request: 2, ContextTokens: 50_000, PromptTokens: 49_000, CacheReported: true, CacheHitTokens: 49_000,
			Drift: &prompt.Drift{Changed: true, Part: "tools", Name: "grep"}},
		{Request: 3, ContextTokens: 100_000, PromptTokens: 99_000, CacheReported: false},
		{Request: 4, ContextTokens: 25_000, PromptTokens: 24_000, CacheReported: true, CacheHitTokens: 12_000, Rebuild: "compaction",
			Drift: &prompt.Drift{Changed: true, Part: "system", Booked: true, Reason: "compaction"}},
		{Request: 5, ContextTokens: 200_000, PromptTokens: 1, CacheReported: true, CacheHitTokens: 1},
	}
	pts := chartPoints(rows, 100_000)
	if len(pts) != 5 {
		t.Fatalf("%d points; want 5 (the warm-up is not a turn request)", len(pts))
	}
	// Plot 208×108: x from 4 to 204 in steps of 50, y from 104 (0) to 4 (1).
	g := ChartLayout(pts, fyne.NewSize(208, 108))
	wantX := []float32{4, 54, 104, 154, 204}
	wantLevelY := []float32{94, 54, 4, 79, 4} // 10 %, 50 %, 100 %, 25 %, clamped 200 %
	for i := range wantX {
		if g.Xs[i] != wantX[i] || g.Level[i] != fyne.NewPos(wantX[i], wantLevelY[i]) {
			t.Errorf("point %d at %v; want (%v, %v)", i, g.Level[i], wantX[i], wantLevelY[i])
		}
	}
	// The hit series breaks where request 3 reported no cache fields.
	if len(g.Hit) != 2 || len(g.Hit[0]) != 2 || len(g.Hit[1]) != 2 {
		t.Fatalf("hit runs = %v; want two runs of two", g.Hit)
	}
	if g.Hit[0][0] != fyne.NewPos(4, 104) || g.Hit[0][1] != fyne.NewPos(54, 4) || g.Hit[1][0] != fyne.NewPos(154, 54) {
		t.Errorf("hit positions = %v", g.Hit)
	}
	if len(g.Markers) != 2 {
		t.Fatalf("markers = %+v; want the drift and the compaction", g.Markers)
	}
	if m := g.Markers[0]; m.X != 54 || m.Kind != MarkerDrift || m.Label != "prefix changed: tool grep — cache reset" {
		t.Errorf("drift marker = %+v", m)
	}
	if m := g.Markers[1]; m.X != 154 || m.Kind != MarkerRebuild || m.Label != "compaction" {
		t.Errorf("rebuild marker = %+v (a booked drift with a rebuild is one rebuild marker)", m)
	}
	if g1 := ChartLayout(pts[:1], fyne.NewSize(208, 108)); g1.Xs[0] != 104 {
		t.Errorf("a single request at x=%v; want the middle", g1.Xs[0])
	}
	if i := nearestPoint(g.Xs, 140); i != 3 {
		t.Errorf("nearest to x=140 is %d; want 3", i)
	}
	if markerColor(MarkerDrift) != theme.Color(theme.ColorNameWarning) {
		t.Error("an unbooked drift marker is not in the warning colour")
	}
}

func TestChartWidgetTotalsAndDetails(t *testing.T) {
	test.NewTempApp(t)
	c := NewChart()
	fynetest.Window(t, c, 300, 260)
	c.SetRows([]ledger.Row{
		{Request: 1, Model: "m", PromptTokens: 10_000, CacheReported: true, CacheMissTokens: 10_000, ContextTokens: 10_000, CompletionTokens: 100},
		{Request: 2, Model: "m", PromptTokens: 20_000, CacheReported: true, CacheHitTokens: 18_000, CacheMissTokens: 2000, ContextTokens: 20_000, CompletionTokens: 100,
			Drift: &prompt.Drift{Changed: true, Part: "tools", Name: "grep"}},
	}, 100_000)
	if got := c.TotalsText(); got != "2 requests · 30k prompt tokens · hit 60 %\ncost n/a · without cache n/a · 1 unbooked drift" {
		t.Errorf("unpriced totals = %q", got)
	}
	c.SetPrices(ledger.OnePrice(ledger.Price{CacheHit: 0.1, CacheMiss: 1, Completion: 2}, true))
	if got := c.TotalsText(); !strings.Contains(got, "cost $0.0142 · without cache $0.0304") {
		t.Errorf("priced totals = %q", got)
	}
	// Live: a request's row is drawn as committed, with its drift.
	c.Add(ledger.Row{Request: 3, PromptTokens: 21_000, CacheReported: true, CacheHitTokens: 0, ContextTokens: 21_000,
		Drift: &prompt.Drift{Changed: true, Part: "system", Name: "agents_md"}})
	pts := c.Points()
	if len(pts) != 3 || pts[2].Row.Request != 3 || pts[2].Marker != MarkerDrift {
		t.Fatalf("after Add: %+v", pts[len(pts)-1])
	}
	r := test.WidgetRenderer(c).(*chartRenderer)
	if len(r.level) != 2 || len(r.marks) != 2 {
		t.Errorf("drawn %d level segments and %d markers; want 2 and 2", len(r.level), len(r.marks))
	}
	// Tapping near the last point shows its exact numbers.
	plot := c.plotSize()
	i := c.NearestAt(plot.Width - 10)
	if i != 2 || !containsAll(c.Details(i), "Request 3", "Prompt 21,000 tokens", "Context 21,000 / 100,000 (21 %)", "Unbooked prefix change") {
		t.Errorf("details of %d = %q", i, c.Details(i))
	}
	test.TapAt(c, fyne.NewPos(plot.Width-10, theme.Size(theme.SizeNameText)*1.4+20))
	if c.popup == nil || !c.popup.Visible() {
		t.Error("tapping the plot showed no popup")
	}
}
