package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	uifork "github.com/tally-dev/tally/ui/fork"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// TestForkFromARowsMenuOpensTheForkWithItsLineage: "Fork…" on the first
// user row asks where the fork works (this folder by default), and Fork
// opens a new session holding turn 1 only, while the session list names
// where it comes from.
func TestForkFromARowsMenuOpensTheForkWithItsLineage(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("answer one"), llmtest.Text("answer two")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("first question")
	h.waitIdle()
	h.send("second question")
	h.waitIdle()
	parent := h.ui.live.id
	rows := h.userRows()
	if len(rows) != 2 {
		t.Fatalf("%d user rows", len(rows))
	}
	row := chat.NewMessageRow(h.ui.chat)
	row.Set(rows[0])
	var forkB *widget.Button
	fynetest.Walk(row, func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok && b.Text == "Fork…" && b.Visible() {
			forkB = b
		}
		return forkB == nil
	})
	if forkB == nil {
		t.Fatal("the user row has no visible Fork… button")
	}
	test.Tap(forkB)
	top := h.win.Canvas().Overlays().Top()
	if top == nil || !h.shows("Fork from turn 1") || !h.shows(uifork.Shared) || !h.shows(uifork.InWorktree) {
		t.Fatal("Fork… opened no dialog offering the folder and a worktree")
	}
	h.tapInDialog("Fork")
	h.waitFor("the fork to open", func() bool {
		return h.ui.live != nil && h.ui.live.id != parent && h.ui.live.sess != nil && h.q.empty()
	})
	if n := len(h.ui.live.sess.Snapshot().Turns()); n != 1 {
		t.Errorf("the fork has %d turns; want turn 1 only", n)
	}
	h.waitFor("the list to name the parent", func() bool { return h.shows("forked from test at turn 1") })
	if !h.shows("Forked turn 1 into a new session in the same folder; no file was touched.") {
		t.Error("no word that the fork was made, and where")
	}
}
