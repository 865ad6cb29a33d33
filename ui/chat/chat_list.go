package chat

import (
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// List is the chat's virtualized list. It draws like Fyne's List (the
// same scroller, gaps and separators) but keeps its rows' heights in a
// slice with their running tops, so finding the rows in view is a binary
// search, and a changed height or offset only lays out the rows in view:
// Fyne's List walked every row's height on each scroll step and redrew
// all the rows in view (building a fresh template row) whenever one row's
// height changed.
//
// Rows are recycled: those that leave the view go to a pool and the
// update function shows another item in them. Heights may be set from the
// update function; the list then lays the view out again.
type List struct {
	widget.BaseWidget

	length func() int
	create func() fyne.CanvasObject
	update func(id int, o fyne.CanvasObject)

	Heights []float32 // by row; rows past its end are rowMin tall
	tops    []float32 // tops[i] is the y of row i, valid below dirty
	dirty   int
	offsetY float32

	template fyne.CanvasObject // an empty row: the default size
	rowMin   fyne.Size

	scroll  *container.Scroll
	content *fyne.Container
	shown   []listRow // the rows in view, by ascending id
	next    []listRow // the next shown, while they are worked out
	pool    []fyne.CanvasObject
	seps    []fyne.CanvasObject

	laying  bool // a layout of the rows is under way
	changed bool // a height changed during it

	// The keyboard (see chat_keys.go): whether the list has it, the frame
	// that says so, and where the keys and characters typed then go.
	Focused bool
	Frame   *canvas.Rectangle    // the focus frame
	OnKey   func(*fyne.KeyEvent) // keys the list handles
	OnRune  func(rune)           // characters typed at the list
}

// listRow is a row in view and the item it shows.
type listRow struct {
	id int
	o  fyne.CanvasObject
}

// NewList makes a list of length() rows made by create and filled by
// update.
func NewList(length func() int, create func() fyne.CanvasObject, update func(int, fyne.CanvasObject)) *List {
	l := &List{length: length, create: create, update: update}
	l.content = container.New(chatListLayout{l})
	l.scroll = container.NewVScroll(l.content)
	l.scroll.OnScrolled = func(p fyne.Position) { l.scrolledTo(p.Y) }
	l.Frame = focusFrame()
	l.ExtendBaseWidget(l)
	return l
}

// chatListLayout places the rows of its list.
type chatListLayout struct{ l *List }

// Layout implements fyne.Layout.
func (c chatListLayout) Layout([]fyne.CanvasObject, fyne.Size) { c.l.layoutRows(false) }

// MinSize implements fyne.Layout: the height of every row with the gaps.
func (c chatListLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(c.l.minRow().Width, c.l.total())
}

// minRow is the size of an empty row, the height of a row without one of
// its own.
func (l *List) minRow() fyne.Size {
	if l.template == nil && l.create != nil {
		l.template = l.create()
		l.rowMin = l.template.MinSize()
	}
	return l.rowMin
}

// rows is how many rows have a height of their own.
func (l *List) rows() int { return len(l.Heights) }

// truncate forgets the heights of the rows from n on.
func (l *List) truncate(n int) {
	if n < len(l.Heights) {
		l.Heights = l.Heights[:max(n, 0)]
		l.dirty = min(l.dirty, max(n, 0))
	}
}

// heightOf is row id's height: its own, or an empty row's.
func (l *List) heightOf(id int) float32 {
	if id < len(l.Heights) {
		return l.Heights[id]
	}
	return l.minRow().Height
}

// ensureTops brings the running tops up to date for n rows: tops[i] is
// the y of row i, tops[n] the end of the last row and its gap. The tops up
// to dirty are still right.
func (l *List) ensureTops(n int) {
	if len(l.tops) == n+1 && l.dirty >= n {
		return
	}
	if len(l.tops) != n+1 {
		l.dirty = min(l.dirty, max(len(l.tops)-1, 0))
		if cap(l.tops) >= n+1 {
			l.tops = l.tops[:n+1]
		} else {
			t := make([]float32, n+1, n+1+n/4)
			copy(t, l.tops)
			l.tops = t
		}
	}
	start := min(max(l.dirty, 0), n)
	l.tops[0] = 0
	pad := theme.Padding()
	for i := start; i < n; i++ {
		l.tops[i+1] = l.tops[i] + l.heightOf(i) + pad
	}
	l.dirty = n
}

// total is the height of every row with the gaps between them.
func (l *List) total() float32 {
	n := l.length()
	if n == 0 {
		return 0
	}
	l.ensureTops(n)
	return l.tops[n] - theme.Padding()
}

// SetItemHeight sets the height of row id.
func (l *List) SetItemHeight(id int, h float32) {
	if id < 0 {
		return
	}
	if id < len(l.Heights) && l.Heights[id] == h {
		return
	}
	for len(l.Heights) <= id {
		l.Heights = append(l.Heights, l.minRow().Height)
	}
	l.Heights[id] = h
	l.dirty = min(l.dirty, id)
	if l.laying {
		l.changed = true
		return
	}
	l.layoutRows(false)
}

// SetHeights sets the height of every row at once.
func (l *List) SetHeights(hs []float32) {
	l.Heights = append(l.Heights[:0], hs...)
	l.dirty = 0
	l.layoutRows(true)
}

// RefreshItem shows row id again if it is in view.
func (l *List) RefreshItem(id int) {
	for _, s := range l.shown {
		if s.id == id {
			l.update(id, s.o)
			l.layoutRows(false)
			return
		}
	}
}

// GetScrollOffset returns how far the list is scrolled down.
func (l *List) GetScrollOffset() float32 { return l.offsetY }

// ScrollToOffset scrolls the list to offset y, kept within its content.
func (l *List) ScrollToOffset(y float32) {
	vh := l.scroll.Size().Height
	total := l.total()
	if vh >= total {
		return // it all fits
	}
	y = min(max(y, 0), total-vh)
	l.syncContent()
	if y == l.offsetY && l.scroll.Offset.Y == y {
		return
	}
	l.scroll.ScrollToOffset(fyne.NewPos(0, y))
	l.scrolledTo(l.scroll.Offset.Y)
}

// moveScroller puts the scroller at the list's offset and lays its bars
// out again for the content's height. Scroll.Refresh would do it too,
// but it also refreshes everything in the content.
func (l *List) moveScroller() {
	l.scroll.Offset = fyne.NewPos(0, -1) // not the offset, so the scroller moves
	l.scroll.ScrollToOffset(fyne.NewPos(0, l.offsetY))
}

// ScrollToTop scrolls to the first row.
func (l *List) ScrollToTop() { l.ScrollToOffset(0) }

// ScrollToBottom scrolls to the end of the last row.
func (l *List) ScrollToBottom() { l.ScrollToOffset(l.total()) }

// ScrollTo scrolls the least needed to show row id, as Fyne's List does.
func (l *List) ScrollTo(id int) {
	n := l.length()
	if id < 0 || id >= n {
		return
	}
	l.ensureTops(n)
	top, vh := l.tops[id], l.scroll.Size().Height
	switch {
	case top < l.offsetY:
		l.ScrollToOffset(top)
	case top+l.minRow().Height > l.offsetY+vh:
		l.ScrollToOffset(top + l.heightOf(id) - vh)
	}
}

// scrolledTo lays the rows out for offset y once the scroller moved there.
func (l *List) scrolledTo(y float32) {
	if y == l.offsetY {
		return
	}
	l.offsetY = y
	l.layoutRows(false)
}

// syncContent sizes the scroller's content to the rows' total height,
// which it clamps its offset to.
// It reports whether the size changed.
func (l *List) syncContent() bool {
	size := l.content.MinSize().Max(l.scroll.Size())
	if l.content.Size() == size {
		return false
	}
	was := l.laying
	l.laying = true
	l.content.Resize(size)
	l.laying = was
	return true
}

// rangeAt returns the first and last rows in view at offset y for a
// viewport vh tall (last < first: none).
func (l *List) rangeAt(y, vh float32, n int) (int, int) {
	// The first row whose bottom (with its gap) is below y, the last one
	// whose top is above the bottom of the view.
	first := sort.Search(n, func(i int) bool { return l.tops[i+1] > y })
	last := sort.Search(n, func(i int) bool { return l.tops[i] >= y+vh }) - 1
	return first, min(last, n-1)
}

// layoutRows shows the rows in view at the current offset: rows that
// stay keep their content (all: they are updated too), rows that come
// into view are taken from the pool and updated, and every shown row is
// placed. Heights set meanwhile lay the view out again.
func (l *List) layoutRows(all bool) {
	if l.laying {
		return
	}
	l.laying = true
	defer func() { l.laying = false }()
	n := l.length()
	vh := l.scroll.Size().Height
	w := l.Size().Width
	var done []int // rows updated by this call
	for pass := 0; pass < 4; pass++ {
		l.changed = false
		l.ensureTops(n)
		total := float32(0)
		if n > 0 {
			total = l.tops[n] - theme.Padding()
		}
		if end := max(total-vh, 0); l.offsetY > end {
			l.offsetY = end
		}
		first, last := 0, -1
		if vh > 0 && n > 0 {
			first, last = l.rangeAt(l.offsetY, vh, n)
		}
		// Rows that left the view go to the pool.
		keep := l.shown[:0]
		for _, s := range l.shown {
			if s.id >= first && s.id <= last && s.id < n {
				keep = append(keep, s)
			} else {
				l.pool = append(l.pool, s.o)
			}
		}
		for i := len(keep); i < len(l.shown); i++ {
			l.shown[i] = listRow{}
		}
		l.shown = keep
		next := l.next[:0]
		j := 0
		for id := first; id <= last; id++ {
			for j < len(l.shown) && l.shown[j].id < id {
				j++
			}
			if j < len(l.shown) && l.shown[j].id == id {
				s := l.shown[j]
				if all && !hasID(done, id) {
					l.update(id, s.o)
					done = append(done, id)
				}
				next = append(next, s)
				continue
			}
			var o fyne.CanvasObject
			if k := len(l.pool); k > 0 {
				o, l.pool[k-1] = l.pool[k-1], nil
				l.pool = l.pool[:k-1]
			} else {
				o = l.create()
			}
			o.Resize(fyne.NewSize(w, l.heightOf(id)))
			l.update(id, o)
			done = append(done, id)
			next = append(next, listRow{id: id, o: o})
		}
		l.shown, l.next = next, l.shown[:0]
		if !l.changed {
			break
		}
	}
	l.place(w)
	resized := l.syncContent()
	if moved := l.scroll.Offset.Y != l.offsetY; moved || resized {
		l.moveScroller()
	}
	canvas.Refresh(l.content)
}

// place puts the shown rows and the separators between them where they go.
func (l *List) place(w float32) {
	pad := theme.Padding()
	thick := theme.Size(theme.SizeNameSeparatorThickness)
	off := (pad + thick) / 2
	objs := l.content.Objects[:0]
	for _, s := range l.shown {
		s.o.Move(fyne.NewPos(0, l.tops[s.id]))
		s.o.Resize(fyne.NewSize(w, l.heightOf(s.id)))
		objs = append(objs, s.o)
	}
	// As in Fyne's List, there is a separator per row and the first one
	// is not used.
	seps := 0
	if len(l.shown) > 1 {
		seps = len(l.shown)
	}
	for len(l.seps) < seps {
		l.seps = append(l.seps, widget.NewSeparator())
	}
	for i := 0; i < seps; i++ {
		sep := l.seps[i]
		if i > 0 {
			sep.Move(fyne.NewPos(0, l.tops[l.shown[i].id]-off))
			sep.Resize(fyne.NewSize(w, thick))
		}
		objs = append(objs, sep)
	}
	for i := len(objs); i < len(l.content.Objects); i++ {
		l.content.Objects[i] = nil
	}
	l.content.Objects = objs
}

func hasID(ids []int, id int) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// MinSize implements fyne.Widget.
func (l *List) MinSize() fyne.Size {
	l.ExtendBaseWidget(l)
	return l.BaseWidget.MinSize()
}

// CreateRenderer implements fyne.Widget.
func (l *List) CreateRenderer() fyne.WidgetRenderer { return &chatListRenderer{l: l} }

type chatListRenderer struct{ l *List }

func (r *chatListRenderer) Layout(size fyne.Size) {
	r.l.scroll.Resize(size)
	r.l.Frame.Resize(size)
	r.l.layoutRows(false)
}

func (r *chatListRenderer) MinSize() fyne.Size {
	return r.l.scroll.MinSize().Max(r.l.minRow())
}

func (r *chatListRenderer) Refresh() {
	r.l.layoutRows(true)
	r.l.scroll.Refresh()
	canvas.Refresh(r.l)
}

func (r *chatListRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.l.scroll, r.l.Frame}
}

func (r *chatListRenderer) Destroy() {}
