package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
)

// A click on the chat gives it the keyboard, which then scrolls it: the
// arrows by a few lines, Page Up and Page Down by a view, Home and End to
// either end; a character typed goes to the prompt box. The row under the
// pointer is highlighted.
func TestTheChatTakesTheKeyboard(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text(longAnswer("long", 80))))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("first")
	h.waitIdle()
	c := h.ui.chat
	canv := h.win.Canvas()

	r := shownRow(h.win, c.Items[len(c.Items)-1])
	if r == nil {
		t.Fatal("the answer is not shown")
	}
	test.Tap(r)
	if canv.Focused() != c.List || !c.List.Focused || !c.List.Frame.Visible() {
		t.Fatalf("after a click on a row the focus is on %T (frame shown %v)", canv.Focused(), c.List.Frame.Visible())
	}
	gap := h.gapToEnd()
	end := c.List.GetScrollOffset()
	if end <= 0 || gap > 2 {
		t.Fatalf("the chat is not at its bottom after the answer (offset %.0f)", end)
	}
	press := func(k fyne.KeyName) float32 {
		t.Helper()
		canv.Focused().TypedKey(&fyne.KeyEvent{Name: k})
		h.q.drain()
		return c.List.GetScrollOffset()
	}
	line := chat.KeyLines * c.LineHeight()
	if got := press(fyne.KeyUp); got < end-line-1 || got > end-line+1 {
		t.Errorf("Up moved the chat from %.0f to %.0f; want %.0f", end, got, end-line)
	}
	before := c.List.GetScrollOffset()
	if got := press(fyne.KeyPageUp); before-got < c.List.Size().Height/2 {
		t.Errorf("Page Up moved the chat from %.0f to %.0f, less than half a view (%.0f)", before, got, c.List.Size().Height)
	}
	if !c.Jump.Visible() {
		t.Error("no Jump to latest after scrolling up with the keys")
	}
	if got := press(fyne.KeyHome); got != 0 {
		t.Errorf("Home left the chat at %.0f", got)
	}
	if got := press(fyne.KeyPageDown); got <= 0 {
		t.Errorf("Page Down from the top left the chat at %.0f", got)
	}
	press(fyne.KeyEnd)
	if g := h.gapToEnd(); g > 2 || c.Jump.Visible() {
		t.Errorf("End left the chat %.0f px above its end (Jump to latest shown %v)", g, c.Jump.Visible())
	}

	// The window's own keys still work while the chat has the keyboard.
	overlays := func() int { return len(canv.Overlays().List()) }
	press(fyne.KeyF1)
	if overlays() != 1 {
		t.Fatal("F1 with the chat focused did not open the shortcuts sheet")
	}
	canv.Focus(c.List)
	pressEscape(h)
	if overlays() != 0 {
		t.Error("Escape with the chat focused did not close the sheet")
	}

	canv.Focus(c.List)
	canv.Focused().TypedRune('w')
	if canv.Focused() != fyne.Focusable(h.ui.input.prompt) || h.ui.input.prompt.Text != "w" || c.List.Frame.Visible() {
		t.Errorf("a character typed in the chat: focus on %T, prompt %q, frame shown %v", canv.Focused(), h.ui.input.prompt.Text, c.List.Frame.Visible())
	}

	r = shownRow(h.win, c.Items[len(c.Items)-1])
	r.MouseIn(&desktop.MouseEvent{})
	if !r.Hover.Visible() {
		t.Error("the row under the pointer is not highlighted")
	}
	r.MouseOut()
	if r.Hover.Visible() {
		t.Error("the highlight stays after the pointer left")
	}
}
