package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// sampleChecklist is the demo's checklist, its item in progress titled
// current.
func sampleChecklist(current string) []todo.Item {
	return []todo.Item{
		{ID: "1", Content: "Find the bug in Add", Status: todo.Completed},
		{ID: "2", Content: current, Status: todo.InProgress},
		{ID: "3", Content: "Run the tests", Status: todo.Pending},
	}
}

// layout960 lays the window out at 960×600 and returns where each
// visible text (labels, buttons, icons) is drawn.
func layout960(h *harness) map[fyne.CanvasObject]rect {
	h.win.Resize(fyne.NewSize(960, 600))
	for range 3 { // the flows and wrapped labels settle at their width
		h.q.drain()
		fynetest.LayoutAll(h.win.Canvas().Content())
	}
	return drawn(h.win.Canvas().Content())
}

// leaves returns the visible texts and icons drawn under o, with where.
func leaves(o fyne.CanvasObject, at map[fyne.CanvasObject]rect) map[fyne.CanvasObject]rect {
	out := map[fyne.CanvasObject]rect{}
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		r, ok := at[c]
		if !ok || !c.Visible() {
			return false
		}
		switch v := c.(type) {
		case *canvas.Text:
			if strings.TrimSpace(v.Text) != "" && !r.empty() {
				out[c] = r
			}
		case *canvas.Image:
			if !r.empty() {
				out[c] = r
			}
		}
		return true
	})
	return out
}

// textOf names a leaf in a failure.
func textOf(o fyne.CanvasObject) string {
	if t, ok := o.(*canvas.Text); ok {
		return "\"" + t.Text + "\""
	}
	return "an icon"
}

// At 960×600, unfolding the session list drew the permission bar's
// "Rules" over the first checklist item and the search icon over
// "Sessions" (issue 33 #9): every column gets at least the width it
// needs, and nothing of one column is drawn over another.
func TestSmallWindowUnfoldsTheSessionListWithoutOverlap(t *testing.T) {
	h := silentSession(t)
	emit := h.events()
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: sampleChecklist("Fix calc.Add")})
	layout960(h)
	if h.ui.panels.showLeft {
		t.Fatal("the session list shows at 960 px before it is unfolded")
	}
	h.ui.panels.toggleLeft()
	at := layout960(h)
	if !h.ui.panels.showLeft || !h.ui.panels.showRight {
		t.Fatalf("at 960 px the session list (%v) and the side panel (%v) do not both show", h.ui.panels.showLeft, h.ui.panels.showRight)
	}
	columnsApart(t, h, at)
}

// columnsApart checks that each column shown is as wide as it needs, and
// that nothing of one is drawn outside it or over another.
func columnsApart(t *testing.T, h *harness, at map[fyne.CanvasObject]rect) {
	t.Helper()
	p := h.ui.panels
	type column struct {
		name string
		o    fyne.CanvasObject
	}
	cols := []column{{"chat column", p.center}}
	if p.showLeft {
		cols = append(cols, column{"session list", p.left})
	}
	if p.showRight {
		cols = append(cols, column{"side panel", p.right})
	}
	for _, c := range cols {
		if got, need := c.o.Size().Width, c.o.MinSize().Width; got < need-0.5 {
			t.Errorf("the %s is %.0f px wide; it needs %.0f", c.name, got, need)
		}
	}
	for i, c := range cols {
		box := at[c.o]
		for o, r := range leaves(c.o, at) {
			if r.x0 < box.x0-0.5 || r.x1 > box.x1+0.5 {
				t.Errorf("%s of the %s is drawn at x %.0f–%.0f, outside its column (%.0f–%.0f)", textOf(o), c.name, r.x0, r.x1, box.x0, box.x1)
			}
			for _, d := range cols[i+1:] {
				for o2, r2 := range leaves(d.o, at) {
					if r.overlaps(r2) {
						t.Errorf("%s of the %s is drawn over %s of the %s", textOf(o), c.name, textOf(o2), d.name)
					}
				}
			}
		}
	}
	// Within the session list's header and the chat's, no two things
	// overlap.
	for _, head := range []struct {
		name   string
		o      fyne.CanvasObject
		bottom float32
	}{{"session list's header", h.ui.sessions.box, at[h.ui.sessions.list].y0}, {"chat's header", p.center, at[h.ui.center.stack].y0}} {
		if !head.o.Visible() || at[head.o].empty() {
			continue
		}
		ls := leaves(head.o, at)
		for o, r := range ls {
			for o2, r2 := range ls {
				_, text := o.(*canvas.Text)
				// (A check box draws its box and its tick as two images,
				// one over the other.)
				if o != o2 && text && r.y0 < head.bottom && r2.y0 < head.bottom && r.overlaps(r2) {
					t.Errorf("in the %s %s is drawn over %s", head.name, textOf(o), textOf(o2))
				}
			}
		}
	}
}

// Larger text (Ctrl+=) in a 960×600 window leaves no room for the three
// columns of the demo (its header names it in bold): unfolding the
// session list then folds the side panel, which comes back when the list
// is folded again, and nothing overlaps.
func TestLargeTextFoldsTheSidePanelForTheSessionList(t *testing.T) {
	h := silentSession(t)
	emit := h.events()
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: sampleChecklist("Fix calc.Add")})
	h.ui.head.demoTag.Show()
	layout960(h)
	h.ui.setTextScale(1.4)
	layout960(h)
	h.ui.panels.toggleLeft()
	at := layout960(h)
	if !h.ui.panels.showLeft || h.ui.panels.showRight {
		t.Errorf("at 140 %% the session list shows: %v, the side panel: %v; want the list alone", h.ui.panels.showLeft, h.ui.panels.showRight)
	}
	columnsApart(t, h, at)
	h.ui.panels.toggleLeft()
	layout960(h)
	if !h.ui.panels.showRight {
		t.Error("the side panel did not come back once the session list was folded")
	}
}

// A long checklist item widened the side panel and squeezed the chat:
// the split jumped from turn to turn (issue 33 #9). The side panel keeps
// its width whatever the checklist says, and the long title is cut to fit.
func TestLongChecklistItemKeepsTheSplit(t *testing.T) {
	h := silentSession(t)
	emit := h.events()
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: sampleChecklist("Fix calc.Add")})
	layout960(h)
	p := h.ui.panels
	right, chatW := fyne.CurrentApp().Driver().AbsolutePositionForObject(p.right).X, h.ui.chat.Box.Size().Width
	long := "Rewrite the parser so that every nested expression, including the ones inside string interpolations and comments, keeps its source position"
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: sampleChecklist(long)})
	at := layout960(h)
	if got := fyne.CurrentApp().Driver().AbsolutePositionForObject(p.right).X; got != right {
		t.Errorf("the side panel moved from x %.0f to %.0f when a long item arrived", right, got)
	}
	if got := h.ui.chat.Box.Size().Width; got != chatW {
		t.Errorf("the chat went from %.0f to %.0f px wide when a long item arrived", chatW, got)
	}
	box := at[p.right]
	for o, r := range leaves(p.right, at) {
		if r.x1 > box.x1+0.5 {
			t.Errorf("%s runs past the side panel's edge (%.0f > %.0f)", textOf(o), r.x1, box.x1)
		}
	}
	if !strings.Contains(h.ui.side.checklist.HeaderText(), "Rewrite the parser") {
		t.Errorf("the header no longer names the item in progress: %q", h.ui.side.checklist.HeaderText())
	}
}
