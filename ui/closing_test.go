package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Closing the window during a turn gave no warning, and after a restart
// the cut-short turn said nothing while its pending call silently read
// "cancelled": the window asks first, and reopening says what happened.
func TestClosingDuringATurnAsksAndReopeningSaysSo(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("write_file", `{"path":"a.txt","content":"x"}`)))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("write a.txt")
	h.pending()

	closed := false
	h.ui.confirmClose(func() { closed = true })
	if closed {
		t.Fatal("the window closed during a turn without asking")
	}
	if !h.overlayShows("A turn is running") || !h.overlayShows("will be cancelled") {
		t.Fatal("no dialog says that a turn runs and its pending call will be cancelled")
	}
	keep := buttonIn(h.win.Canvas().Overlays().Top(), "Keep working")
	if keep == nil || buttonIn(h.win.Canvas().Overlays().Top(), "Stop the turn and close") == nil {
		t.Fatal("the dialog lacks Stop the turn and close / Keep working")
	}
	test.Tap(keep)
	if closed || !h.ui.live.job.running {
		t.Fatal("Keep working closed the window or stopped the turn")
	}
	h.ui.confirmClose(func() { closed = true })
	test.Tap(buttonIn(h.win.Canvas().Overlays().Top(), "Stop the turn and close"))
	if !closed {
		t.Fatal("Stop the turn and close did not close")
	}
	h.ui.Close()

	h2 := reopen(t, h)
	h2.waitFor("the session to reopen", func() bool { return h2.ui.live != nil && h2.ui.live.sess != nil })
	note := h2.ui.banner.Text()
	if !strings.Contains(note, "interrupted when Tally closed") || !strings.Contains(note, "write_file") ||
		!strings.Contains(note, "send a message to continue") && !strings.Contains(note, "Send a message to continue") {
		t.Errorf("reopening says %q; want the interrupted turn and its cancelled call explained", note)
	}
	h2.ui.Close()
	h3 := reopen(t, h)
	h3.waitFor("the session to reopen again", func() bool { return h3.ui.live != nil && h3.ui.live.sess != nil && h3.q.empty() })
	if strings.Contains(h3.ui.banner.Text(), "interrupted") {
		t.Error("the note came back on the next launch")
	}
}

// With no turn running the window closes without asking.
func TestClosingWhenIdleDoesNotAsk(t *testing.T) {
	h := silentSession(t)
	closed := false
	h.ui.confirmClose(func() { closed = true })
	if !closed || h.win.Canvas().Overlays().Top() != nil {
		t.Error("an idle window asked before closing")
	}
}
