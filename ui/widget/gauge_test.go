package widget

import (
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/ui/internal/fynetest"
)

func TestGaugeMarksAtThresholds(t *testing.T) {
	test.NewTempApp(t)
	g := NewGauge()
	fynetest.Window(t, g, 1000+2*theme.Padding(), 120)
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
