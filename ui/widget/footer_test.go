package widget

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
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

// The loop guard's alert was cut to "⚠ loop…" and a click did nothing:
// it gets the room its text needs (up to 60 % of the footer), and a click
// shows the whole text.
func TestFooterAlertShowsInFullAndOpensOnClick(t *testing.T) {
	test.NewTempApp(t)
	f := NewFooter(nil)
	w := fynetest.Window(t, f, 960, 80)
	f.State = FooterState{Model: "deepseek-chat", Run: Running(3, 50, "")}
	f.State.Alerts = []string{"loop guard: blocked a third identical read_file call"}
	f.Update()
	fynetest.LayoutAll(w.Canvas().Content())
	need := fyne.MeasureText(f.alert.Text, theme.TextSize(), f.alert.TextStyle).Width
	if got := f.alert.Size().Width; got < need {
		t.Errorf("the alert is %.0f px wide; its text needs %.0f", got, need)
	}
	long := "loop guard: read_file calc/calc.go was called 3 times with the same arguments in this turn; the third call was blocked and the model was told to change its approach"
	f.State.Alerts = []string{long}
	f.Update()
	fynetest.LayoutAll(w.Canvas().Content())
	test.Tap(f.alert)
	pop := f.AlertPopUp()
	if pop == nil || !pop.Visible() {
		t.Fatal("clicking the alert showed nothing")
	}
	found := false
	fynetest.Walk(pop, func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok && l.Text == long {
			found = l.Wrapping == fyne.TextWrapWord
		}
		return true
	})
	if !found {
		t.Error("the pop-up does not show the whole alert, wrapped")
	}
}
