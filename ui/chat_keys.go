package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
)

// The chat takes the keyboard: a click on a row, or Tab, gives the chat
// the focus (a thin frame in the theme's focus colour says so), and then
// the arrow keys move it by a few lines, Page Up and Page Down by a view
// less a line, Home and End to either end; a character typed goes to the
// prompt box, which takes the keyboard back. A row under the pointer is
// highlighted as Fyne's lists do.

// keyLines is how many text lines an arrow key scrolls.
const keyLines = wheelLines

// focusFrame is the frame drawn over the chat while it has the keyboard.
func focusFrame() *canvas.Rectangle {
	f := canvas.NewRectangle(nil)
	f.StrokeColor = theme.Color(theme.ColorNameFocus)
	f.StrokeWidth = 2
	f.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	f.Hide()
	return f
}

// FocusGained implements fyne.Focusable.
func (l *chatList) FocusGained() { l.setFocused(true) }

// FocusLost implements fyne.Focusable.
func (l *chatList) FocusLost() { l.setFocused(false) }

func (l *chatList) setFocused(on bool) {
	l.focused = on
	if l.frame != nil {
		l.frame.StrokeColor = theme.Color(theme.ColorNameFocus)
		showMark(l.frame, on)
	}
}

// showMark shows or hides r, a highlight, redrawing it only when that
// changes it.
func showMark(r *canvas.Rectangle, on bool) {
	if r.Visible() == on {
		return
	}
	if on {
		r.Show()
	} else {
		r.Hide()
	}
	r.Refresh()
}

// TypedRune implements fyne.Focusable; the chat takes no text, so a
// character typed there is passed on (the app sends it to the prompt box).
func (l *chatList) TypedRune(r rune) {
	if l.onRune != nil {
		l.onRune(r)
	}
}

// TypedKey implements fyne.Focusable: it passes the key to the chat.
func (l *chatList) TypedKey(ev *fyne.KeyEvent) {
	if l.onKey != nil {
		l.onKey(ev)
	}
}

// Tapped implements fyne.Tappable: a click on the chat gives it the
// keyboard.
func (l *chatList) Tapped(*fyne.PointEvent) { l.takeFocus() }

// takeFocus gives the list the keyboard, when it is on a canvas.
func (l *chatList) takeFocus() {
	if c := fyne.CurrentApp().Driver().CanvasForObject(l); c != nil && c.Focused() != l {
		c.Focus(l)
	}
}

// key scrolls the chat for a key typed while it has the focus, and
// reports whether the key was one that scrolls.
func (c *chatView) key(ev *fyne.KeyEvent) bool {
	vh := c.list.Size().Height
	line := keyLines * c.lineHeight()
	off := c.list.GetScrollOffset()
	switch ev.Name {
	case fyne.KeyUp:
		off -= line
	case fyne.KeyDown:
		off += line
	case fyne.KeyPageUp:
		off -= max(vh-c.lineHeight(), line)
	case fyne.KeyPageDown:
		off += max(vh-c.lineHeight(), line)
	case fyne.KeyHome:
		off = 0
	case fyne.KeyEnd:
		c.toBottom()
		return true
	default:
		return false
	}
	if end := c.total() - vh; end > 0 {
		c.list.ScrollToOffset(min(max(off, 0), end))
	}
	c.scrolled()
	return true
}

var _ desktop.Hoverable = (*messageRow)(nil)

// MouseIn implements desktop.Hoverable: the row under the pointer is
// highlighted.
func (r *messageRow) MouseIn(*desktop.MouseEvent) { r.setHovered(true) }

// MouseMoved implements desktop.Hoverable.
func (r *messageRow) MouseMoved(*desktop.MouseEvent) {}

// MouseOut implements desktop.Hoverable.
func (r *messageRow) MouseOut() { r.setHovered(false) }

func (r *messageRow) setHovered(on bool) {
	if r.hover != nil {
		r.hover.FillColor = theme.Color(theme.ColorNameHover)
		showMark(r.hover, on)
	}
}
