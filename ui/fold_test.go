package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// shownRow returns the visible row drawing it in win.
func shownRow(win fyne.Window, it *chat.Item) *chat.MessageRow {
	var found *chat.MessageRow
	fynetest.Walk(win.Canvas().Content(), func(o fyne.CanvasObject) bool {
		if r, ok := o.(*chat.MessageRow); ok && r.Item == it && r.Visible() {
			found = r
		}
		return found == nil
	})
	return found
}

// A closed cycle's row reads top down: its heading, then the button that
// opens it, whose arrow points right while it is closed and down while
// it is open.
func TestCycleFoldArrowsAndPlace(t *testing.T) {
	fynetest.GoldenApp(t)
	var msgs []transcript.Message
	for i := range 43 {
		msgs = append(msgs, transcript.UserText("", fmt.Sprintf("question %d", i), goldenTime))
	}
	q := &queue{}
	c := chat.New(q.post, nil, nil)
	c.SetHistory([]cycle.Archive{{Cycle: 1, Started: goldenTime, Ended: goldenTime, Messages: msgs, Tokens: 90_000}}, nil,
		[]transcript.Message{transcript.UserText("", "now", goldenTime)})
	win := fynetest.Window(t, c.Box, 760, 600)
	settle(t, q)
	c.List.ScrollToTop()
	fynetest.LayoutAll(win.Canvas().Content())
	settle(t, q)
	it := c.Items[0]
	r := shownRow(win, it)
	if r == nil {
		t.Fatal("the cycle row is not shown")
	}
	if r.Reason.Visible() {
		t.Errorf("a second toggle %q shows above the heading", r.Reason.Text)
	}
	if !r.Fold.Visible() || r.Fold.Text != "▸ Show its 43 messages" {
		t.Fatalf("the closed cycle's button reads %q (shown %v)", r.Fold.Text, r.Fold.Visible())
	}
	if r.Fold.Position().Y <= r.Plain.Position().Y {
		t.Errorf("the button (y %.0f) is above its heading (y %.0f)", r.Fold.Position().Y, r.Plain.Position().Y)
	}
	if !strings.HasPrefix(r.Plain.Text, "Cycle 1 ·") {
		t.Errorf("heading %q", r.Plain.Text)
	}
	test.Tap(r.Fold)
	settle(t, q)
	c.List.ScrollToTop()
	fynetest.LayoutAll(win.Canvas().Content())
	settle(t, q)
	if r = shownRow(win, it); r == nil || r.Fold.Text != "▾ Hide its 43 messages" || len(c.Items) != 45 {
		t.Fatalf("the open cycle: button %v, %d rows", r, len(c.Items))
	}
	test.Tap(r.Fold)
	settle(t, q)
	if r = shownRow(win, it); r == nil || r.Fold.Text != "▸ Show its 43 messages" || len(c.Items) != 2 {
		t.Errorf("closed again: %d rows", len(c.Items))
	}
}
