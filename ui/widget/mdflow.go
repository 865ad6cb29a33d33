package widget

import (
	"image/color"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// flowText is a paragraph of styled spans that wraps word by word at its
// width, whatever the styles of the words. Its minimum height is the
// height of its lines at its current width, as a wrapping Label's is.
type flowText struct {
	widget.BaseWidget

	words []word
	size  float32 // text size
	align Align
	lineH float32
}

// word is one piece of a paragraph between spaces, with whether a space
// comes before it.
type word struct {
	text   string
	span   Span
	space  bool // a space before it
	brk    bool // a line break before it
	width  float32
	height float32
}

// newFlow makes a paragraph of spans at text size size.
func newFlow(spans []Span, size float32, align Align) *flowText {
	f := &flowText{}
	f.setSpans(spans, size, align)
	f.ExtendBaseWidget(f)
	return f
}

// setSpans makes f the paragraph of spans at text size size.
func (f *flowText) setSpans(spans []Span, size float32, align Align) {
	f.size, f.align, f.lineH = size, align, 0
	clear(f.words)
	f.words = f.words[:0]
	space := false
	for _, s := range spans {
		if s.Break {
			f.words = append(f.words, word{brk: true})
			space = false
		}
		if s.Code {
			f.words = append(f.words, word{text: s.Text, span: s, space: space})
			space = false
			continue
		}
		rest := s.Text
		for rest != "" {
			if rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' {
				space = true
				rest = rest[1:]
				continue
			}
			end := strings.IndexAny(rest, " \t\n")
			if end < 0 {
				end = len(rest)
			}
			f.words = append(f.words, word{text: rest[:end], span: s, space: space})
			space = false
			rest = rest[end:]
		}
	}
	for i := range f.words {
		w := &f.words[i]
		if w.brk {
			continue
		}
		m := fyne.MeasureText(w.text, size, styleOf(w.span))
		w.width, w.height = m.Width+codePad(w.span)*2, m.Height
		f.lineH = max(f.lineH, m.Height)
	}
	if f.lineH == 0 {
		f.lineH = fyne.MeasureText("M", size, fyne.TextStyle{}).Height
	}
}

// styleOf is the font style of a span.
func styleOf(s Span) fyne.TextStyle {
	return fyne.TextStyle{Bold: s.Bold, Italic: s.Italic, Monospace: s.Code}
}

// codePad is the room on each side of inline code for its background.
func codePad(s Span) float32 {
	if s.Code {
		return 3
	}
	return 0
}

// spaceWidth is the width of a space at size.
func spaceWidth(size float32) float32 {
	return fyne.MeasureText("a a", size, fyne.TextStyle{}).Width - fyne.MeasureText("aa", size, fyne.TextStyle{}).Width
}

// placed is a word laid out: its line and x.
type placed struct {
	w    *word
	x    float32
	line int
}

// place lays the words out at width, returning where each goes, how
// many lines there are and each line's width. Words without a space
// between them (code and the comma after it) stay on one line; a group
// wider than the width gets a line of its own.
func (f *flowText) place(width float32) ([]placed, int, []float32) {
	sp := spaceWidth(f.size)
	var out []placed
	var widths []float32
	x, line := float32(0), 0
	for i := 0; i < len(f.words); {
		w := &f.words[i]
		if w.brk {
			widths = append(widths, x)
			x, line = 0, line+1
			i++
			continue
		}
		j, gw := i+1, w.width
		for j < len(f.words) && !f.words[j].space && !f.words[j].brk {
			gw += f.words[j].width
			j++
		}
		gap := float32(0)
		if w.space && x > 0 {
			gap = sp
		}
		if x > 0 && x+gap+gw > width {
			widths = append(widths, x)
			x, line, gap = 0, line+1, 0
		}
		x += gap
		for k := i; k < j; k++ {
			out = append(out, placed{w: &f.words[k], x: x, line: line})
			x += f.words[k].width
		}
		i = j
	}
	widths = append(widths, x)
	return out, line + 1, widths
}

// naturalWidth is the width of the paragraph on one line.
func (f *flowText) naturalWidth() float32 {
	_, _, widths := f.place(1e9)
	m := float32(0)
	for _, w := range widths {
		m = max(m, w)
	}
	return m
}

// widestWord is the width of the longest word.
func (f *flowText) widestWord() float32 {
	m := float32(0)
	for _, w := range f.words {
		m = max(m, w.width)
	}
	return m
}

// heightAt is the paragraph's height at width.
func (f *flowText) heightAt(width float32) float32 {
	if width <= 0 {
		width = f.naturalWidth()
	}
	_, lines, _ := f.place(width)
	return float32(lines) * f.lineH
}

// MinSize implements fyne.Widget: the height of the lines at the current
// width.
func (f *flowText) MinSize() fyne.Size {
	return fyne.NewSize(min(f.widestWord(), 40), f.heightAt(f.Size().Width))
}

// CreateRenderer implements fyne.Widget.
func (f *flowText) CreateRenderer() fyne.WidgetRenderer {
	return &flowRenderer{f: f, width: -1}
}

type flowRenderer struct {
	f     *flowText
	objs  []fyne.CanvasObject
	width float32
	// texts and boxes are the words and code backgrounds drawn so far,
	// reused by the next build.
	texts []*canvas.Text
	boxes []*canvas.Rectangle
}

func (r *flowRenderer) Layout(size fyne.Size) {
	if size.Width == r.width && r.objs != nil {
		return
	}
	r.width = size.Width
	r.build(size.Width)
}

// build makes the texts and code backgrounds for width.
func (r *flowRenderer) build(width float32) {
	f := r.f
	ps, _, widths := f.place(width)
	clear(r.objs)
	r.objs = r.objs[:0]
	nt, nb := 0, 0
	fg := theme.Color(theme.ColorNameForeground)
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		x := p.x
		switch f.align {
		case AlignCenter:
			x += (width - widths[p.line]) / 2
		case AlignRight:
			x += width - widths[p.line]
		}
		y := float32(p.line) * f.lineH
		w := p.w
		if w.span.Code {
			if nb == len(r.boxes) {
				r.boxes = append(r.boxes, canvas.NewRectangle(nil))
			}
			bg := r.boxes[nb]
			nb++
			bg.FillColor, bg.CornerRadius = codeBackground(), 3
			bg.Resize(fyne.NewSize(w.width, f.lineH))
			bg.Move(fyne.NewPos(x, y))
			r.objs = append(r.objs, bg)
		}
		if nt == len(r.texts) {
			r.texts = append(r.texts, canvas.NewText("", nil))
		}
		t := r.texts[nt]
		nt++
		col := fg
		if w.span.Link {
			col = theme.Color(theme.ColorNamePrimary)
		}
		// The words of one style on one line are drawn as one text, so
		// the font spaces them (and kerns them) as it spaces any text, and
		// every word starts on a whole unit: words drawn one by one at
		// fractional positions came out unevenly spaced, some lighter.
		text, width := w.text, w.width
		for !w.span.Code && !w.span.Strike && i+1 < len(ps) && sameRun(w, ps[i+1].w) && ps[i+1].line == p.line {
			i++
			next := ps[i].w
			if next.space {
				text += " "
			}
			text += next.text
			width = ps[i].x + next.width - p.x
		}
		if t.Text != text || !sameColor(t.Color, col) || t.TextSize != f.size || t.TextStyle != styleOf(w.span) {
			t.Text, t.Color, t.TextSize, t.TextStyle = text, col, f.size, styleOf(w.span)
			t.Refresh() // a reused text: its drawing is stale
		}
		t.Move(fyne.NewPos(float32(math.Round(float64(x+codePad(w.span)))), float32(math.Round(float64(y+(f.lineH-w.height)/2)))))
		t.Resize(fyne.NewSize(width-2*codePad(w.span), w.height))
		r.objs = append(r.objs, t)
		if w.span.Strike {
			l := canvas.NewLine(fg)
			l.Position1 = fyne.NewPos(x, y+f.lineH/2)
			l.Position2 = fyne.NewPos(x+w.width, y+f.lineH/2)
			r.objs = append(r.objs, l)
		}
	}
	// Keep what a paragraph of about this size needs again.
	clear(r.texts[nt:])
	r.texts = r.texts[:nt]
	clear(r.boxes[nb:])
	r.boxes = r.boxes[:nb]
}

func (r *flowRenderer) MinSize() fyne.Size { return r.f.MinSize() }

func (r *flowRenderer) Refresh() {
	r.build(r.f.Size().Width)
	r.width = r.f.Size().Width
	canvas.Refresh(r.f)
}

func (r *flowRenderer) Objects() []fyne.CanvasObject { return r.objs }

func (r *flowRenderer) Destroy() {}

// sameRun reports whether b can be drawn in one text after a: plain or
// styled text of the same style and colour (code and struck text keep
// their own boxes and lines).
func sameRun(a, b *word) bool {
	return !b.brk && !b.span.Code && !b.span.Strike && styleOf(a.span) == styleOf(b.span) && a.span.Link == b.span.Link
}

// sameColor reports whether a and b are the same colour (nil is none).
func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// codeBackground is the fill behind code: the input background, which
// stands apart from the chat's on both themes.
func codeBackground() color.Color { return theme.Color(theme.ColorNameInputBackground) }
