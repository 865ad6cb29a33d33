package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// longAnswer is an answer of n numbered lines, taller than the chat.
func longAnswer(tag string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d of a long answer.\n\n", tag, i)
	}
	return b.String()
}

// gapToEnd is how far the chat's last row ends below the visible area
// (0 at the bottom).
func (h *harness) gapToEnd() float32 {
	c := h.ui.chat
	fynetest.LayoutAll(h.win.Canvas().Content())
	h.q.drain()
	total := float32(0)
	for _, x := range c.List.Heights {
		total += x
	}
	total += float32(max(len(c.List.Heights)-1, 0)) * theme.Padding()
	return total - (c.List.GetScrollOffset() + c.List.Size().Height)
}

// The chat follows new output while it is at the bottom: after an
// approval the answer is in view, a new turn streams in view, and a user
// scrolled up is offered "Jump to latest" instead of being pulled down.
func TestChatFollowsTheBottom(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Text(longAnswer("first", 40)),
		llmtest.Call("run_shell", `{"command":"echo hi"}`), llmtest.Text(longAnswer("after approval", 30)),
		llmtest.Text(longAnswer("third", 30)),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("first")
	h.waitIdle()
	if g := h.gapToEnd(); g > 2 {
		t.Errorf("after the first answer the chat ends %.0f px below the view", g)
	}
	h.send("run it")
	it := h.pending()
	test.Tap(h.card(it).Approve)
	h.waitIdle()
	if g := h.gapToEnd(); g > 2 {
		t.Errorf("after the approval the answer ends %.0f px below the view", g)
	}
	if h.ui.chat.Jump.Visible() {
		t.Error("Jump to latest shows at the bottom")
	}

	h.ui.chat.List.ScrollToOffset(0)
	h.ui.chat.Scrolled()
	if !h.ui.chat.Jump.Visible() {
		t.Fatal("no Jump to latest after scrolling up")
	}
	test.Tap(h.ui.chat.Jump)
	if g := h.gapToEnd(); g > 2 || h.ui.chat.Jump.Visible() {
		t.Errorf("Jump to latest left the chat %.0f px above the end (button shown %v)", g, h.ui.chat.Jump.Visible())
	}

	h.ui.chat.List.ScrollToOffset(0)
	h.ui.chat.Scrolled()
	h.send("third")
	h.waitIdle()
	if g := h.gapToEnd(); g > 2 {
		t.Errorf("a turn the user sent streamed out of view (%.0f px below)", g)
	}
}

// A wheel step scrolls the chat by a few lines, not by Fyne's 25 px.
func TestChatWheelStep(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text(longAnswer("long", 60))))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("go")
	h.waitIdle()
	h.gapToEnd()
	c := h.ui.chat
	before := c.List.GetScrollOffset()
	var row fyne.Scrollable
	fynetest.Walk(h.win.Canvas().Content(), func(o fyne.CanvasObject) bool {
		if r, ok := o.(*chat.MessageRow); ok && row == nil && r.Visible() {
			row = r
		}
		return row == nil
	})
	if row == nil {
		t.Fatal("no chat row takes the wheel")
	}
	row.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, 25)}) // one step up
	if moved := before - c.List.GetScrollOffset(); moved < 3*c.LineHeight() {
		t.Errorf("one wheel step moved the chat %.0f px; want at least three lines (%.0f px)", moved, 3*c.LineHeight())
	}
}

// A chat showing its end keeps showing it when the window gets smaller.
func TestChatKeepsItsEndOnResize(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text(longAnswer("short", 6))))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("go")
	h.waitIdle()
	h.gapToEnd()
	h.win.Resize(fyne.NewSize(700, 420))
	h.waitFor("the resize", func() bool { return h.q.empty() })
	if g := h.gapToEnd(); g > 2 {
		t.Errorf("after the window shrank the chat ends %.0f px below the view", g)
	}
}
