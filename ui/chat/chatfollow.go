package chat

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

// WheelStep is the distance the desktop driver reports for one wheel step
// (Fyne's scroll speed on Linux and Windows).
const WheelStep = 25

// newJump makes the "Jump to latest" button and the layer that puts it in
// the bottom right corner of the chat, hidden until needed.
func (c *View) newJump() {
	c.Jump = &widget.Button{Text: "Jump to latest", Icon: theme.MoveDownIcon(), Importance: widget.HighImportance,
		OnTapped: func() { c.ToBottom() }}
	c.Jump.Hide()
	c.jumpLayer = container.NewBorder(nil, container.NewPadded(container.NewHBox(layout.NewSpacer(), c.Jump)), nil, nil)
}

// Total is the height of every row with the gaps between them.
func (c *View) Total() float32 { return c.List.total() }

// ToBottom scrolls to the end and remembers where that was, so a later
// check can tell whether the user has scrolled away since. Fyne's own
// ScrollToBottom measures the list's content as last laid out, which
// after rows were added or grew is short of the end (or says it all fits
// and goes to the top), so the list is laid out again first.
func (c *View) ToBottom() {
	c.List.Refresh()
	c.List.ScrollToBottom()
	if end := c.Total() - c.List.Size().Height; end > 0 && c.List.GetScrollOffset() < end-1 {
		c.List.ScrollToOffset(end)
	}
	c.autoOffset = c.List.GetScrollOffset()
	c.Scrolled()
}

// following reports whether new content should keep the list scrolled
// down: the user has not scrolled since the last automatic scroll, or the
// list shows its last row anyway. It does not rely on every row height
// being exact.
func (c *View) following() bool {
	if off := c.List.GetScrollOffset(); off >= c.autoOffset-1 && c.autoOffset > 0 {
		return true
	}
	return c.atBottom()
}

// atBottom reports whether the list shows its last row, so new content
// should keep it scrolled down.
func (c *View) atBottom() bool {
	return c.List.GetScrollOffset()+c.List.Size().Height >= c.Total()-40
}

// Scrolled shows "Jump to latest" while the end of the chat is out of
// view.
func (c *View) Scrolled() {
	if c.Jump == nil {
		return
	}
	away := c.List.GetScrollOffset()+c.List.Size().Height < c.Total()-2 && c.List.Size().Height > 0
	c.endShown = !away
	if away == c.Jump.Visible() {
		return
	}
	if away {
		c.Jump.Show()
	} else {
		c.Jump.Hide()
	}
}

// scrolledLater checks the jump button after this frame, once however
// many rows asked for it.
func (c *View) scrolledLater() {
	if c.checking || c.later == nil {
		return
	}
	c.checking = true
	c.later(func() {
		c.checking = false
		c.Scrolled()
	})
}

// LineHeight is the height of one line of chat text.
func (c *View) LineHeight() float32 {
	if c.lineH > 0 {
		return c.lineH
	}
	return fyne.MeasureText("Mg", theme.TextSize(), fyne.TextStyle{}).Height + theme.LineSpacing()
}

// wheel scrolls the chat for a wheel or touchpad movement of dy (positive:
// up), wheelLines lines per wheel step.
func (c *View) wheel(dy float32) {
	end := c.Total() - c.List.Size().Height
	if end <= 0 {
		return
	}
	off := c.List.GetScrollOffset() - dy*wheelLines*c.LineHeight()/WheelStep
	c.List.ScrollToOffset(min(max(off, 0), end))
	c.Scrolled()
}

// Scrolled implements fyne.Scrollable: a chat row passes the wheel on to
// the chat, which scrolls by lines rather than by Fyne's few pixels.
func (r *MessageRow) Scrolled(ev *fyne.ScrollEvent) { r.chat.wheel(ev.Scrolled.DY) }
