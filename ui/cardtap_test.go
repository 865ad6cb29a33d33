package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Clicking a tool card's title leaves the chat where it is: the row is
// not selected, so the list does not scroll to it (or to the top).
func TestClickingACardTitleKeepsTheChatStill(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Text(longAnswer("before", 30)),
		llmtest.Call("read_file", `{"path":"a.txt"}`), llmtest.Text(longAnswer("after", 30)),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	writeFile(t, ws, "a.txt", "hello\n")
	h.send("first")
	h.waitIdle()
	h.send("read it")
	h.waitIdle()
	h.gapToEnd()
	c := h.ui.chat
	it := h.toolItem("read_file")
	i := c.Index(it)
	// Put the card's title in the middle of the view.
	top := float32(0)
	for _, x := range c.List.Heights[:i] {
		top += x + 4
	}
	c.List.ScrollToOffset(top - 200)
	h.gapToEnd()
	before := c.List.GetScrollOffset()
	card := h.card(it)
	if card == nil {
		t.Fatal("the card is not shown")
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(card.Title).Add(fyne.NewPos(10, 5))
	test.TapCanvas(h.win.Canvas(), pos)
	h.gapToEnd()
	if after := c.List.GetScrollOffset(); after != before {
		t.Errorf("one click on the card's title moved the chat from %.0f to %.0f", before, after)
	}
}
