package widget

import (
	"fmt"
	"image/color"
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Mark is a labelled tick on the gauge.
type Mark struct {
	Label    string
	Tokens   int
	Fraction float32 // position on the bar, 0..1
}

// GaugeText renders the water level: "84.2k / 128k (66 %)", prefixed with
// "≈" when the level is partly estimated.
func GaugeText(used, window int, exact bool) string {
	if window <= 0 {
		return "no session open"
	}
	pct := float64(used) * 100 / float64(window)
	s := fmt.Sprintf("%s / %s (%.0f %%)", TokensShort(used), TokensShort(window), pct)
	if !exact {
		s = "≈ " + s
	}
	return s
}

// fraction places tokens on a bar of the given window, clamped to 0..1.
func fraction(tokens, window int) float32 {
	if window <= 0 || tokens <= 0 {
		return 0
	}
	f := float32(tokens) / float32(window)
	if f > 1 {
		return 1
	}
	return f
}

// Gauge is the context water level: tokens in the next request against
// the window, with labelled ticks at the auto-compaction and cycle
// thresholds. It only displays; thresholds are changed in settings, never
// by clicking here.
type Gauge struct {
	widget.BaseWidget

	used, window int
	exact        bool
	marks        []Mark
}

// NewGauge returns an empty gauge.
func NewGauge() *Gauge {
	g := &Gauge{exact: true}
	g.ExtendBaseWidget(g)
	return g
}

// SetLevel sets the level and the window.
func (g *Gauge) SetLevel(used, window int, exact bool) {
	g.used, g.window, g.exact = used, window, exact
	g.placeMarks()
	g.Refresh()
}

// SetThresholds sets the compaction and cycle thresholds (0 hides a mark).
func (g *Gauge) SetThresholds(compactAt, cycleAt int) {
	g.marks = g.marks[:0]
	if compactAt > 0 {
		g.marks = append(g.marks, Mark{Label: "compact", Tokens: compactAt})
	}
	if cycleAt > 0 {
		g.marks = append(g.marks, Mark{Label: "cycle", Tokens: cycleAt})
	}
	g.placeMarks()
	g.Refresh()
}

func (g *Gauge) placeMarks() {
	for i := range g.marks {
		g.marks[i].Fraction = fraction(g.marks[i].Tokens, g.window)
	}
}

// Level returns the level and the window as drawn.
func (g *Gauge) Level() (used, window int) { return g.used, g.window }

// Marks returns the ticks as drawn.
func (g *Gauge) Marks() []Mark { return append([]Mark(nil), g.marks...) }

// Text returns the level text as shown.
func (g *Gauge) Text() string { return GaugeText(g.used, g.window, g.exact) }

// Fill returns the filled fraction of the bar.
func (g *Gauge) Fill() float32 { return fraction(g.used, g.window) }

// CreateRenderer implements fyne.Widget.
func (g *Gauge) CreateRenderer() fyne.WidgetRenderer {
	r := &gaugeRenderer{g: g,
		title: canvas.NewText("Context", theme.Color(theme.ColorNameForeground)),
		text:  canvas.NewText("", theme.Color(theme.ColorNameForeground)),
		track: canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground)),
		fill:  canvas.NewRectangle(theme.Color(theme.ColorNamePrimary)),
	}
	r.title.TextStyle.Bold = true
	r.track.CornerRadius = 3
	r.fill.CornerRadius = 3
	r.Refresh()
	return r
}

type gaugeRenderer struct {
	g           *Gauge
	title, text *canvas.Text
	track, fill *canvas.Rectangle
	ticks       []*canvas.Rectangle
	tickLabels  []*canvas.Text
	objects     []fyne.CanvasObject
}

const gaugeBarHeight = 14

func (r *gaugeRenderer) MinSize() fyne.Size {
	th := theme.Size(theme.SizeNameText)
	return fyne.NewSize(160, th*1.4+4+gaugeBarHeight+4+th*0.85*1.3)
}

func (r *gaugeRenderer) Layout(size fyne.Size) {
	th := theme.Size(theme.SizeNameText)
	lineH := th * 1.4
	r.title.Move(fyne.NewPos(0, 0))
	r.title.Resize(fyne.NewSize(size.Width/2, lineH))
	tw := fyne.MeasureText(r.text.Text, r.text.TextSize, r.text.TextStyle).Width
	r.text.Move(fyne.NewPos(size.Width-tw, 0))
	r.text.Resize(fyne.NewSize(tw, lineH))
	y := lineH + 4
	r.track.Move(fyne.NewPos(0, y))
	r.track.Resize(fyne.NewSize(size.Width, gaugeBarHeight))
	r.fill.Move(fyne.NewPos(0, y))
	r.fill.Resize(fyne.NewSize(size.Width*r.g.Fill(), gaugeBarHeight))
	n := min(len(r.g.marks), len(r.ticks))
	xs := make([]float32, n)
	for i := range n {
		x := size.Width * r.g.marks[i].Fraction
		r.ticks[i].Move(fyne.NewPos(x-1, y-3))
		r.ticks[i].Resize(fyne.NewSize(2, gaugeBarHeight+6))
		xs[i] = x
	}
	r.placeTickLabels(xs, size.Width, y+gaugeBarHeight+3)
}

// placeTickLabels puts each tick's label under its tick, centred where
// there is room, never past either edge of the bar and never over another
// label: labels that would collide are pushed apart, left to right and
// then back from the right edge.
func (r *gaugeRenderer) placeTickLabels(xs []float32, width, y float32) {
	const gap = 4
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return xs[order[a]] < xs[order[b]] })
	w := make([]float32, len(xs))
	lx := make([]float32, len(xs))
	for i, l := range r.tickLabels[:len(xs)] {
		w[i] = fyne.MeasureText(l.Text, l.TextSize, l.TextStyle).Width
		lx[i] = min(max(xs[i]-w[i]/2, 0), max(width-w[i], 0))
	}
	for k := 1; k < len(order); k++ {
		prev, cur := order[k-1], order[k]
		lx[cur] = max(lx[cur], lx[prev]+w[prev]+gap)
	}
	for k := len(order) - 1; k >= 0; k-- {
		cur := order[k]
		limit := width - w[cur]
		if k+1 < len(order) {
			next := order[k+1]
			limit = min(limit, lx[next]-w[cur]-gap)
		}
		lx[cur] = max(min(lx[cur], limit), 0)
	}
	for i, l := range r.tickLabels[:len(xs)] {
		l.Move(fyne.NewPos(lx[i], y))
		l.Resize(fyne.NewSize(w[i], l.TextSize*1.3))
	}
}

func (r *gaugeRenderer) Refresh() {
	fg := theme.Color(theme.ColorNameForeground)
	r.title.Color = fg
	r.text.Color = fg
	r.text.Text = r.g.Text()
	r.text.TextSize = theme.Size(theme.SizeNameText)
	r.track.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.track.StrokeColor = theme.Color(theme.ColorNameSeparator)
	r.track.StrokeWidth = 1
	r.fill.FillColor = levelFill(r.g.Fill())
	for len(r.ticks) < len(r.g.marks) {
		r.ticks = append(r.ticks, canvas.NewRectangle(fg))
		t := canvas.NewText("", fg)
		t.TextSize = theme.Size(theme.SizeNameCaptionText)
		r.tickLabels = append(r.tickLabels, t)
	}
	r.objects = []fyne.CanvasObject{r.title, r.text, r.track, r.fill}
	for i, m := range r.g.marks {
		r.ticks[i].FillColor = fg
		r.tickLabels[i].Color = theme.Color(theme.ColorNamePlaceHolder)
		r.tickLabels[i].Text = fmt.Sprintf("%s %s", m.Label, TokensShort(m.Tokens))
		r.objects = append(r.objects, r.ticks[i], r.tickLabels[i])
	}
	r.Layout(r.g.Size())
	for _, o := range r.objects {
		o.Refresh()
	}
}

// levelFill colours the bar by level: neutral, then warning at 85 %, error
// at 95 %.
func levelFill(f float32) color.Color {
	switch {
	case f >= 0.95:
		return theme.Color(theme.ColorNameError)
	case f >= 0.85:
		return theme.Color(theme.ColorNameWarning)
	default:
		return theme.Color(theme.ColorNamePrimary)
	}
}

func (r *gaugeRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *gaugeRenderer) Destroy()                     {}

var _ fyne.WidgetRenderer = (*gaugeRenderer)(nil)
