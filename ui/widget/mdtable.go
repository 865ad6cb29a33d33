package widget

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// mdTable is a Markdown table drawn as aligned columns: each column as
// wide as its widest cell when they all fit, else narrowed and wrapped in
// proportion; the header bold on the code background, rules between rows.
type mdTable struct {
	widget.BaseWidget

	cells  [][]*flowText
	aligns []Align
	cols   int
}

// cellPad is the room around a cell's text.
func cellPad() float32 { return theme.Padding() * 4 }

func newTable(b *Block) *mdTable {
	t := &mdTable{aligns: b.Aligns}
	for _, row := range b.Rows {
		t.cols = max(t.cols, len(row))
	}
	for _, row := range b.Rows {
		cells := make([]*flowText, t.cols)
		for i := range cells {
			var spans []Span
			if i < len(row) {
				spans = row[i]
			}
			a := AlignLeft
			if i < len(t.aligns) {
				a = t.aligns[i]
			}
			cells[i] = newFlow(spans, theme.TextSize(), a)
		}
		t.cells = append(t.cells, cells)
	}
	t.ExtendBaseWidget(t)
	return t
}

// widths returns the columns' text widths at width.
func (t *mdTable) widths(width float32) []float32 {
	nat := make([]float32, t.cols)
	least := make([]float32, t.cols)
	for _, row := range t.cells {
		for i, c := range row {
			nat[i] = max(nat[i], c.naturalWidth())
			least[i] = max(least[i], min(c.widestWord(), 120))
		}
	}
	room := width - float32(t.cols)*cellPad()
	sum := float32(0)
	for _, n := range nat {
		sum += n
	}
	if sum <= room || sum == 0 {
		return nat
	}
	// Narrow the columns with the most text beyond their longest word.
	out := make([]float32, t.cols)
	minSum, extra := float32(0), float32(0)
	for i := range nat {
		least[i] = min(least[i], nat[i])
		minSum += least[i]
		extra += nat[i] - least[i]
	}
	spare := max(room-minSum, 0)
	for i := range nat {
		out[i] = least[i]
		if extra > 0 {
			out[i] += (nat[i] - least[i]) * spare / extra
		}
	}
	return out
}

// rowHeights returns each row's height for the column widths ws.
func (t *mdTable) rowHeights(ws []float32) []float32 {
	hs := make([]float32, len(t.cells))
	for r, row := range t.cells {
		for i, c := range row {
			hs[r] = max(hs[r], c.heightAt(max(ws[i], 1)))
		}
		hs[r] += cellPad()
	}
	return hs
}

// MinSize implements fyne.Widget: its height at its current width.
func (t *mdTable) MinSize() fyne.Size {
	w := t.Size().Width
	if w <= 0 {
		w = 1e9
	}
	ws := t.widths(w)
	total, h := float32(0), float32(0)
	for _, x := range ws {
		total += x + cellPad()
	}
	for _, x := range t.rowHeights(ws) {
		h += x
	}
	return fyne.NewSize(min(total, 80), h+1)
}

// CreateRenderer implements fyne.Widget.
func (t *mdTable) CreateRenderer() fyne.WidgetRenderer {
	r := &tableRenderer{t: t, head: canvas.NewRectangle(codeBackground())}
	for _, row := range t.cells {
		for _, c := range row {
			r.cells = append(r.cells, c)
		}
	}
	return r
}

type tableRenderer struct {
	t     *mdTable
	head  *canvas.Rectangle
	rules []*canvas.Line
	cells []fyne.CanvasObject
	objs  []fyne.CanvasObject
}

func (r *tableRenderer) Layout(size fyne.Size) {
	t := r.t
	ws := t.widths(size.Width)
	hs := t.rowHeights(ws)
	total := float32(0)
	for _, w := range ws {
		total += w + cellPad()
	}
	pad := cellPad() / 2
	y := float32(0)
	r.rules = r.rules[:0]
	for ri, row := range t.cells {
		x := float32(0)
		for i, c := range row {
			c.Resize(fyne.NewSize(ws[i], hs[ri]-cellPad()))
			c.Move(fyne.NewPos(x+pad, y+pad))
			x += ws[i] + cellPad()
		}
		if ri == 0 {
			r.head.Resize(fyne.NewSize(total, hs[0]))
			r.head.Move(fyne.NewPos(0, 0))
		}
		y += hs[ri]
		l := canvas.NewLine(theme.Color(theme.ColorNameSeparator))
		l.StrokeWidth = 1
		l.Position1, l.Position2 = fyne.NewPos(0, y), fyne.NewPos(total, y)
		r.rules = append(r.rules, l)
	}
	r.objs = append([]fyne.CanvasObject{r.head}, r.cells...)
	for _, l := range r.rules {
		r.objs = append(r.objs, l)
	}
}

func (r *tableRenderer) MinSize() fyne.Size { return r.t.MinSize() }

func (r *tableRenderer) Refresh() {
	r.head.FillColor = codeBackground()
	r.head.Refresh()
	r.Layout(r.t.Size())
	for _, c := range r.cells {
		c.Refresh()
	}
	canvas.Refresh(r.t)
}

func (r *tableRenderer) Objects() []fyne.CanvasObject {
	if r.objs == nil {
		r.Layout(r.t.Size())
	}
	return r.objs
}

func (r *tableRenderer) Destroy() {}
