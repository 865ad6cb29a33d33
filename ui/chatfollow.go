package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Following the end of the chat: new output keeps the chat at its bottom
// while the user is there (and always after they send a message); scrolled
// away, they get a "Jump to latest" button instead of being pulled down.
// The mouse wheel moves the chat by a few lines a step.

// wheelLines is how many text lines one wheel step scrolls.
const wheelLines = 3

// wheelStep is the distance the desktop driver reports for one wheel step
// (Fyne's scroll speed on Linux and Windows).
const wheelStep = 25

// newJump makes the "Jump to latest" button and the layer that puts it in
// the bottom right corner of the chat, hidden until needed.
func (c *chatView) newJump() {
	c.jump = &widget.Button{Text: "Jump to latest", Icon: theme.MoveDownIcon(), Importance: widget.HighImportance,
		OnTapped: func() { c.toBottom() }}
	c.jump.Hide()
	c.jumpLayer = container.NewBorder(nil, container.NewPadded(container.NewHBox(layout.NewSpacer(), c.jump)), nil, nil)
}

// total is the height of every row with the gaps between them.
func (c *chatView) total() float32 { return c.list.total() }

// toBottom scrolls to the end and remembers where that was, so a later
// check can tell whether the user has scrolled away since. Fyne's own
// ScrollToBottom measures the list's content as last laid out, which
// after rows were added or grew is short of the end (or says it all fits
// and goes to the top), so the list is laid out again first.
func (c *chatView) toBottom() {
	c.list.Refresh()
	c.list.ScrollToBottom()
	if end := c.total() - c.list.Size().Height; end > 0 && c.list.GetScrollOffset() < end-1 {
		c.list.ScrollToOffset(end)
	}
	c.autoOffset = c.list.GetScrollOffset()
	c.scrolled()
}

// following reports whether new content should keep the list scrolled
// down: the user has not scrolled since the last automatic scroll, or the
// list shows its last row anyway. It does not rely on every row height
// being exact.
func (c *chatView) following() bool {
	if off := c.list.GetScrollOffset(); off >= c.autoOffset-1 && c.autoOffset > 0 {
		return true
	}
	return c.atBottom()
}

// atBottom reports whether the list shows its last row, so new content
// should keep it scrolled down.
func (c *chatView) atBottom() bool {
	return c.list.GetScrollOffset()+c.list.Size().Height >= c.total()-40
}

// scrolled shows "Jump to latest" while the end of the chat is out of
// view.
func (c *chatView) scrolled() {
	if c.jump == nil {
		return
	}
	away := c.list.GetScrollOffset()+c.list.Size().Height < c.total()-2 && c.list.Size().Height > 0
	c.endShown = !away
	if away == c.jump.Visible() {
		return
	}
	if away {
		c.jump.Show()
	} else {
		c.jump.Hide()
	}
}

// scrolledLater checks the jump button after this frame, once however
// many rows asked for it.
func (c *chatView) scrolledLater() {
	if c.checking || c.later == nil {
		return
	}
	c.checking = true
	c.later(func() {
		c.checking = false
		c.scrolled()
	})
}

// lineHeight is the height of one line of chat text.
func (c *chatView) lineHeight() float32 {
	if c.lineH > 0 {
		return c.lineH
	}
	return fyne.MeasureText("Mg", theme.TextSize(), fyne.TextStyle{}).Height + theme.LineSpacing()
}

// wheel scrolls the chat for a wheel or touchpad movement of dy (positive:
// up), wheelLines lines per wheel step.
func (c *chatView) wheel(dy float32) {
	end := c.total() - c.list.Size().Height
	if end <= 0 {
		return
	}
	off := c.list.GetScrollOffset() - dy*wheelLines*c.lineHeight()/wheelStep
	c.list.ScrollToOffset(min(max(off, 0), end))
	c.scrolled()
}

// Scrolled implements fyne.Scrollable: a chat row passes the wheel on to
// the chat, which scrolls by lines rather than by Fyne's few pixels.
func (r *messageRow) Scrolled(ev *fyne.ScrollEvent) { r.chat.wheel(ev.Scrolled.DY) }
