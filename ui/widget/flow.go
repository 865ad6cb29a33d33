package widget

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// FlowLayout puts its children side by side at their minimum sizes and
// starts a new row where the next one would not fit, like words in a
// paragraph. Its minimum height is that of the rows at the width it was
// last laid out at (one row before the first layout), so the window's
// next frame gives it the height its rows need.
type FlowLayout struct {
	width float32 // the width of the last layout
}

// rows places objs in rows no wider than width and returns each one's
// position and the total height.
func (l *FlowLayout) rows(objs []fyne.CanvasObject, width float32) ([]fyne.Position, float32) {
	pad := theme.Padding()
	pos := make([]fyne.Position, len(objs))
	var x, y, rowH float32
	for i, o := range objs {
		if !o.Visible() {
			continue
		}
		s := o.MinSize()
		if x > 0 && x+s.Width > width {
			x, y = 0, y+rowH+pad
			rowH = 0
		}
		pos[i] = fyne.NewPos(x, y)
		x += s.Width + pad
		rowH = max(rowH, s.Height)
	}
	return pos, y + rowH
}

// Layout implements fyne.Layout.
func (l *FlowLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	l.width = size.Width
	pos, _ := l.rows(objs, size.Width)
	for i, o := range objs {
		o.Move(pos[i])
		o.Resize(o.MinSize())
	}
}

// MinSize implements fyne.Layout: the widest child, and the height of the
// rows at the last width.
func (l *FlowLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w float32
	for _, o := range objs {
		if o.Visible() {
			w = max(w, o.MinSize().Width)
		}
	}
	width := l.width
	if width <= 0 {
		width = 1e9 // not laid out yet: one row
	}
	_, h := l.rows(objs, max(width, w))
	return fyne.NewSize(w, h)
}
