package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// rect is an object's area on the canvas.
type rect struct{ x0, y0, x1, y1 float32 }

func (r rect) overlaps(o rect) bool {
	return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1
}

func (r rect) clip(o rect) rect {
	return rect{max(r.x0, o.x0), max(r.y0, o.y0), min(r.x1, o.x1), min(r.y1, o.y1)}
}

func (r rect) empty() bool { return r.x1 <= r.x0 || r.y1 <= r.y0 }

// drawn returns where each visible object under root is drawn, clipped by
// the scroll containers around it, as the painter clips them.
func drawn(root fyne.CanvasObject) map[fyne.CanvasObject]rect {
	out := map[fyne.CanvasObject]rect{}
	var walk func(o fyne.CanvasObject, origin fyne.Position, clip rect)
	walk = func(o fyne.CanvasObject, origin fyne.Position, clip rect) {
		if o == nil || !o.Visible() {
			return
		}
		p := origin.Add(o.Position())
		s := o.Size()
		r := rect{p.X, p.Y, p.X + s.Width, p.Y + s.Height}
		out[o] = r.clip(clip)
		switch v := o.(type) {
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c, p, clip)
			}
		case *container.Scroll:
			walk(v.Content, p.Subtract(v.Offset), clip.clip(r))
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(v).Objects() {
				walk(c, p, clip)
			}
		}
	}
	walk(root, fyne.Position{}, rect{-1e6, -1e6, 1e6, 1e6})
	return out
}

// At 960×600 with a turn running, the checklist's empty line was drawn
// over the context gauge and the cycle tick's label ran past the panel's
// edge.
func TestSmallWindowKeepsTheChecklistOffTheGauge(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("ok"), llmtest.Reply{Content: "ok", Delay: 2 * time.Second}))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.win.Resize(fyne.NewSize(960, 600))
	h.send("hello")
	h.waitIdle()
	h.send("again")
	h.ui.side.mcpInfo.SetText("MCP: 2 of 2 servers connected · 14 tools · their schemas take ≈ 3.1k tokens of every request")
	h.ui.side.mcpInfo.Show()
	h.ui.side.gauge.SetThresholds(96_000, 112_000)
	h.ui.side.gauge.SetLevel(30_000, 128_000, true)
	fynetest.LayoutAll(h.win.Canvas().Content())
	at := drawn(h.win.Canvas().Content())
	g, ok := at[h.ui.side.gauge]
	if !ok {
		t.Fatal("the gauge is not drawn")
	}
	fynetest.Walk(h.ui.side.checklist, func(o fyne.CanvasObject) bool {
		r, ok := at[o]
		if !ok {
			return false
		}
		switch v := o.(type) {
		case *widget.Label, *canvas.Text, *widget.RichText:
			if !r.empty() && r.overlaps(g) {
				t.Errorf("the checklist's %T %v is drawn over the gauge (%v)", v, r, g)
			}
		}
		return true
	})
	for _, o := range test.WidgetRenderer(h.ui.side.gauge).Objects() {
		l, ok := o.(*canvas.Text)
		if !ok || l.Text == "" {
			continue
		}
		r := at[o]
		if w := fyne.MeasureText(l.Text, l.TextSize, l.TextStyle).Width; r.x1-r.x0 < w-0.5 || r.x0 < g.x0-0.5 || r.x1 > g.x1+0.5 {
			t.Errorf("the gauge's label %q at %v is cut or leaves the gauge (%v)", l.Text, r, g)
		}
	}
	h.ui.stop()
	h.waitIdle()
}

// At 1280 px the demo's suggestions were cut off behind a sideways
// scrollbar: they wrap onto more rows and each is drawn whole.
func TestDemoSuggestionsWrapInsteadOfScrolling(t *testing.T) {
	h := newHarness(t, map[string]string{})
	h.ui.startDemo()
	h.waitFor("the demo session", func() bool { return h.ui.live != nil && h.ui.live.sess != nil && h.ui.input.suggestBox.Visible() })
	h.ui.stop()
	h.waitFor("the demo turn to stop", func() bool { return !h.ui.live.job.running })
	for _, w := range []float32{1280, 960} {
		h.win.Resize(fyne.NewSize(w, 800))
		fynetest.LayoutAll(h.win.Canvas().Content())
		fynetest.LayoutAll(h.win.Canvas().Content()) // again, at the rows' height
		at := drawn(h.win.Canvas().Content())
		box := at[h.ui.input.suggestBox]
		for _, o := range h.ui.input.suggest.Objects {
			b, ok := o.(*widget.Button)
			if !ok {
				continue
			}
			r, m := at[b], b.MinSize()
			if r.x1-r.x0 < m.Width-0.5 || r.y1-r.y0 < m.Height-0.5 || r.x1 > box.x1+0.5 || r.y1 > box.y1+0.5 {
				t.Errorf("at %v px the suggestion %q is cut: drawn %v of %v, its row %v", w, b.Text, r, m, box)
			}
		}
	}
}
