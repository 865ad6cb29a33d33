package chat

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

// KeyLines is how many text lines an arrow key scrolls.
const KeyLines = wheelLines

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
func (l *List) FocusGained() { l.setFocused(true) }

// FocusLost implements fyne.Focusable.
func (l *List) FocusLost() { l.setFocused(false) }

func (l *List) setFocused(on bool) {
	l.Focused = on
	if l.Frame != nil {
		l.Frame.StrokeColor = theme.Color(theme.ColorNameFocus)
		showMark(l.Frame, on)
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
func (l *List) TypedRune(r rune) {
	if l.OnRune != nil {
		l.OnRune(r)
	}
}

// TypedKey implements fyne.Focusable: it passes the key to the chat.
func (l *List) TypedKey(ev *fyne.KeyEvent) {
	if l.OnKey != nil {
		l.OnKey(ev)
	}
}

// Tapped implements fyne.Tappable: a click on the chat gives it the
// keyboard.
func (l *List) Tapped(*fyne.PointEvent) { l.takeFocus() }

// takeFocus gives the list the keyboard, when it is on a canvas.
func (l *List) takeFocus() {
	if c := fyne.CurrentApp().Driver().CanvasForObject(l); c != nil && c.Focused() != l {
		c.Focus(l)
	}
}

// Key scrolls the chat for a key typed while it has the focus, and
// reports whether the key was one that scrolls.
func (c *View) Key(ev *fyne.KeyEvent) bool {
	vh := c.List.Size().Height
	line := KeyLines * c.LineHeight()
	off := c.List.GetScrollOffset()
	switch ev.Name {
	case fyne.KeyUp:
		off -= line
	case fyne.KeyDown:
		off += line
	case fyne.KeyPageUp:
		off -= max(vh-c.LineHeight(), line)
	case fyne.KeyPageDown:
		off += max(vh-c.LineHeight(), line)
	case fyne.KeyHome:
		off = 0
	case fyne.KeyEnd:
		c.ToBottom()
		return true
	default:
		return false
	}
	if end := c.Total() - vh; end > 0 {
		c.List.ScrollToOffset(min(max(off, 0), end))
	}
	c.Scrolled()
	return true
}

var _ desktop.Hoverable = (*MessageRow)(nil)

// MouseIn implements desktop.Hoverable: the row under the pointer is
// highlighted.
func (r *MessageRow) MouseIn(*desktop.MouseEvent) { r.setHovered(true) }

// MouseMoved implements desktop.Hoverable.
func (r *MessageRow) MouseMoved(*desktop.MouseEvent) {}

// MouseOut implements desktop.Hoverable.
func (r *MessageRow) MouseOut() { r.setHovered(false) }

func (r *MessageRow) setHovered(on bool) {
	if r.Hover != nil {
		r.Hover.FillColor = theme.Color(theme.ColorNameHover)
		showMark(r.Hover, on)
	}
}
