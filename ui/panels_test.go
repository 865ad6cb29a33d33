package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

func TestChecklistFollowsEvents(t *testing.T) {
	h := silentSession(t)
	emit := h.events()
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: []todo.Item{
		{ID: "1", Content: "Find the bug", Status: todo.Completed},
		{ID: "2", Content: "Fix calc.Add", Status: todo.InProgress},
		{ID: "3", Content: "Run the tests", Status: todo.Pending},
	}})
	h.q.drain()
	c := h.ui.side.checklist
	if got := c.Summary(); got != "1/3 · Fix calc.Add" {
		t.Errorf("summary = %q; want \"1/3 · Fix calc.Add\"", got)
	}
	if n := len(c.Items()); n != 3 {
		t.Fatalf("the checklist shows %d items; want 3", n)
	}

	// The next change moves the marker; collapsing shows the summary only.
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: []todo.Item{
		{ID: "1", Content: "Find the bug", Status: todo.Completed},
		{ID: "2", Content: "Fix calc.Add", Status: todo.Completed},
		{ID: "3", Content: "Run the tests", Status: todo.InProgress},
	}})
	h.q.drain()
	c.Toggle()
	if !c.Collapsed() || !strings.Contains(c.HeaderText(), "2/3 · Run the tests") {
		t.Errorf("collapsed header %q; want \"2/3 · Run the tests\"", c.HeaderText())
	}
}

func TestDriftAlertInFooterAndChart(t *testing.T) {
	h := silentSession(t)
	emit := h.events()
	emit(agent.Event{Kind: agent.EventDrift, Drift: &prompt.Drift{Changed: true, Part: "system", Booked: true, Reason: "compaction"}})
	h.q.drain()
	if a := h.ui.footer.Alert(); a != "" {
		t.Errorf("a booked drift raised the alert %q", a)
	}
	drift := prompt.Drift{Changed: true, Part: "tools", Name: "grep"}
	emit(agent.Event{Kind: agent.EventDrift, Drift: &drift})
	// The engine's next usage event carries the row it committed, marked
	// with the drift.
	emit(agent.Event{Kind: agent.EventUsage, Usage: &agent.Usage{Window: 128_000,
		Row: ledger.Row{Request: 1, PromptTokens: 5000, ContextTokens: 5200, CacheReported: true, Drift: &drift}}})
	h.q.drain()
	if a := h.ui.footer.Alert(); a != "prefix changed: tool grep — cache reset" {
		t.Errorf("footer alert = %q", a)
	}
	pts := h.ui.side.chart.Points()
	if len(pts) != 1 || pts[0].Marker != tw.MarkerDrift {
		t.Errorf("chart points = %+v; want one request marked with the drift", pts)
	}
	h.ui.footer.State.Alerts = []string{"loop guard: read_file called 5 times with the same arguments"}
	h.ui.footer.Update()
	if a := h.ui.footer.Alert(); !strings.Contains(a, "cache reset · loop guard") {
		t.Errorf("footer alert = %q; want the drift and the engine's alert", a)
	}
	h.ui.footer.DismissAlerts()
	if a := h.ui.footer.Alert(); a != "" {
		t.Errorf("alert after dismissing = %q", a)
	}
}

func TestWarmUpOnNewSession(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "OK"}))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	s := h.ui.settings
	s.WarmUp = true
	s.Prices = map[string]config.Price{"test-model": {CacheHit: 1, CacheMiss: 10, Completion: 20}}
	h.ui.applySettings(s)
	h.newSession()
	h.waitFor("the warm-up cost in the footer", func() bool {
		return strings.HasPrefix(h.ui.footer.State.WarmUp, "warm-up ") && strings.Contains(h.ui.footer.State.WarmUp, "$")
	})
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests; want the one warm-up", n)
	}
	if pts := h.ui.side.chart.Points(); len(pts) != 0 || h.ui.side.chart.Totals().Requests != 1 {
		t.Errorf("chart has %d points and %d requests; the warm-up counts in the totals only", len(pts), h.ui.side.chart.Totals().Requests)
	}
}

func TestSessionDetailReadableWhenSelected(t *testing.T) {
	if detailColor(true) != theme.ColorNameForeground || detailColor(false) != theme.ColorNamePlaceHolder {
		t.Error("the selected row's detail line is not drawn in the foreground colour")
	}
	h := silentSession(t)
	h.waitFor("the row", func() bool { return len(h.ui.sessions.items) == 1 })
	h.ui.sessions.list.Refresh()
	var seg *widget.TextSegment
	fynetest.Walk(h.ui.sessions.list, func(o fyne.CanvasObject) bool {
		if v, ok := o.(*widget.RichText); ok && strings.Contains(v.String(), "cycle 1") {
			seg = v.Segments[0].(*widget.TextSegment)
		}
		return true
	})
	if seg == nil || seg.Style.ColorName != theme.ColorNameForeground {
		t.Errorf("selected row detail = %+v; want the foreground colour", seg)
	}
}
