package widget

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/internal/text"
)

// MarkerKind is what a vertical marker on the chart stands for.
type MarkerKind int

// Marker kinds. An unbooked drift is an accident that reset the cache and
// is drawn in the warning colour; a rebuild (compaction or cycle) and a
// booked drift were intended.
const (
	MarkerNone MarkerKind = iota
	MarkerRebuild
	MarkerDrift    // an unbooked prefix change
	MarkerBooked   // a booked prefix change without a rebuild record
	MarkerFallback // the request went on with a fallback model: a new cache prefix
)

// Chart geometry in device-independent pixels.
const (
	chartInset    = 4   // space between the plot's edge and the outer points
	chartPlotH    = 96  // height of the plot
	chartMinWidth = 160 // narrowest useful chart
)

// String names the kind.
func (k MarkerKind) String() string {
	return [...]string{"none", "rebuild", "drift", "booked drift", "fallback"}[k]
}

// ChartPoint is one turn request on the chart.
type ChartPoint struct {
	Row      ledger.Row
	Level    float64 // context tokens after the request / window, 0..1
	Hit      float64 // share of the prompt served from the cache, 0..1
	HitKnown bool    // the backend reported cache fields
	Marker   MarkerKind
	Label    string // the marker's label: "compaction", "cycle", the drift
}

// chartPoints turns ledger rows into chart points, each at the level its
// row records. Warm-up, summary and brief calls are not turn requests and
// are left out of the series (they still count in the totals).
func chartPoints(rows []ledger.Row, window int) []ChartPoint {
	var pts []ChartPoint
	for _, r := range rows {
		if r.Kind != ledger.KindTurn {
			continue
		}
		p := ChartPoint{Row: r, HitKnown: r.CacheReported && r.PromptTokens > 0}
		if window > 0 {
			p.Level = math.Min(float64(r.ContextTokens)/float64(window), 1)
		}
		if p.HitKnown {
			p.Hit = r.HitRatio()
		}
		switch {
		case r.Fallback != "":
			p.Marker, p.Label = MarkerFallback, "fell back: "+r.Fallback
		case r.Drift != nil && r.Drift.Changed && !r.Drift.Booked:
			p.Marker, p.Label = MarkerDrift, DriftAlert(*r.Drift)
		case r.Rebuild != "":
			p.Marker, p.Label = MarkerRebuild, r.Rebuild
		case r.Drift != nil && r.Drift.Changed:
			p.Marker, p.Label = MarkerBooked, r.Drift.String()
		}
		pts = append(pts, p)
	}
	return pts
}

// DriftAlert phrases an unbooked prefix change for the footer:
// "prefix changed: tool grep — cache reset".
func DriftAlert(d prompt.Drift) string {
	what := "section " + quoteName(d.Name)
	if d.Part == "tools" {
		what = "tool " + quoteName(d.Name)
	}
	return "prefix changed: " + what + " — cache reset"
}

func quoteName(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return s
}

// ChartMarker is a vertical marker placed on the plot.
type ChartMarker struct {
	X     float32
	Point int // index into the points
	Kind  MarkerKind
	Label string
}

// ChartGeometry is where everything goes on a plot of a given size, in the
// plot's own coordinates.
type ChartGeometry struct {
	Xs      []float32       // x of every point
	Level   []fyne.Position // one per point
	Hit     [][]fyne.Position
	Markers []ChartMarker
}

// ChartLayout places points on a plot of the given size: x spreads the
// requests evenly between the insets (a single request sits in the
// middle), y maps 0..1 to bottom..top. The hit series breaks into runs
// where the backend reported no cache fields. It is a pure function so the
// geometry can be tested without a window.
func ChartLayout(pts []ChartPoint, size fyne.Size) ChartGeometry {
	var g ChartGeometry
	n := len(pts)
	if n == 0 || size.Width <= 0 || size.Height <= 0 {
		return g
	}
	left, right := float32(chartInset), size.Width-chartInset
	top, bottom := float32(chartInset), size.Height-chartInset
	x := func(i int) float32 {
		if n == 1 {
			return size.Width / 2
		}
		return left + (right-left)*float32(i)/float32(n-1)
	}
	y := func(v float64) float32 {
		v = math.Max(0, math.Min(1, v))
		return bottom - (bottom-top)*float32(v)
	}
	var run []fyne.Position
	for i, p := range pts {
		xi := x(i)
		g.Xs = append(g.Xs, xi)
		g.Level = append(g.Level, fyne.NewPos(xi, y(p.Level)))
		if p.HitKnown {
			run = append(run, fyne.NewPos(xi, y(p.Hit)))
		} else if len(run) > 0 {
			g.Hit = append(g.Hit, run)
			run = nil
		}
		if p.Marker != MarkerNone {
			g.Markers = append(g.Markers, ChartMarker{X: xi, Point: i, Kind: p.Marker, Label: p.Label})
		}
	}
	if len(run) > 0 {
		g.Hit = append(g.Hit, run)
	}
	return g
}

// nearestPoint returns the index of the point closest to x, or -1.
func nearestPoint(xs []float32, x float32) int {
	best, bestD := -1, float32(math.MaxFloat32)
	for i, xi := range xs {
		d := xi - x
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// Chart draws, per request, the context level (tokens / window) and the
// cache-hit share as two lines, with vertical markers at compactions,
// cycles and prefix drifts, and the session totals below. Tapping the plot
// shows the exact numbers of the nearest request. It draws the ledger rows
// it is given and derives nothing of its own: the request numbers, levels,
// drifts and rebuilds are the rows', the hit shares and costs the
// ledger's (Row.HitRatio, ledger.Sum).
type Chart struct {
	widget.BaseWidget

	rows   []ledger.Row
	window int
	prices ledger.PriceBook // nil: no prices, costs show "n/a"
	points []ChartPoint
	totals *widget.Label
	popup  *widget.PopUp
	plot   fyne.Size
}

// NewChart returns an empty chart.
func NewChart() *Chart {
	c := &Chart{totals: &widget.Label{Wrapping: fyne.TextWrapWord, SizeName: theme.SizeNameCaptionText}}
	c.ExtendBaseWidget(c)
	c.update()
	return c
}

// SetRows replaces the chart's data with a session's ledger.
func (c *Chart) SetRows(rows []ledger.Row, window int) {
	c.rows = append([]ledger.Row(nil), rows...)
	c.window = window
	c.update()
}

// SetPrices sets the prices the costs are computed with (see ledger.Cost);
// a model without a price shows "n/a".
func (c *Chart) SetPrices(prices ledger.PriceBook) {
	c.prices = prices
	c.update()
}

// priceBook returns the prices, never nil.
func (c *Chart) priceBook() ledger.PriceBook {
	if c.prices == nil {
		return ledger.OnePrice(ledger.Price{}, false)
	}
	return c.prices
}

// SetWindow sets the context window the level is measured against.
func (c *Chart) SetWindow(window int) {
	if window != c.window {
		c.window = window
		c.update()
	}
}

// Add appends one request's row as the engine committed it: its request
// number, level, drift and rebuild are drawn as they are.
func (c *Chart) Add(r ledger.Row) {
	c.rows = append(c.rows, r)
	c.update()
}

// Points returns the plotted points.
func (c *Chart) Points() []ChartPoint { return append([]ChartPoint(nil), c.points...) }

// Totals returns the session totals over every row.
func (c *Chart) Totals() ledger.Totals { return ledger.Sum(c.rows, c.priceBook()) }

// TotalsText renders the totals shown under the plot.
func (c *Chart) TotalsText() string { return TotalsText(c.Totals()) }

// TotalsText renders session totals: requests, prompt tokens, hit %, the
// cost and what it would have been without the cache ("n/a" without a
// price), and the number of unbooked drifts.
func TotalsText(t ledger.Totals) string {
	if t.Requests == 0 {
		return "No requests yet."
	}
	cost, naive := "n/a", "n/a"
	if t.Priced {
		cost, naive = Dollars(t.Cost), Dollars(t.ZeroCacheCost)
	}
	drift := "no unbooked drift"
	if t.Drifts > 0 {
		drift = text.Plural(t.Drifts, "unbooked drift")
	}
	return fmt.Sprintf("%s · %s prompt tokens · hit %s\ncost %s · without cache %s · %s",
		text.Plural(t.Requests, "request"), TokensShort(t.Prompt), Percent(t.HitRatio*100), cost, naive, drift)
}

// Details is the popup text of point i: the request's exact numbers.
func (c *Chart) Details(i int) string {
	if i < 0 || i >= len(c.points) {
		return ""
	}
	p := c.points[i]
	r := p.Row
	var b strings.Builder
	fmt.Fprintf(&b, "Request %d", r.Request)
	if !r.Time.IsZero() {
		fmt.Fprintf(&b, " · %s", r.Time.Local().Format("15:04:05"))
	}
	if r.Model != "" {
		fmt.Fprintf(&b, " · %s", r.Model)
	}
	fmt.Fprintf(&b, "\nPrompt %s tokens", text.Thousands(r.PromptTokens))
	if r.CacheReported {
		fmt.Fprintf(&b, " (%s from cache, %s not; hit %s)", text.Thousands(r.CacheHitTokens), text.Thousands(missOf(r)), Percent(r.HitRatio()*100))
	} else {
		b.WriteString(" (no cache figures reported)")
	}
	fmt.Fprintf(&b, "\nCompletion %s tokens", text.Thousands(r.CompletionTokens))
	if c.window > 0 {
		fmt.Fprintf(&b, "\nContext %s / %s (%.0f %%)", text.Thousands(r.ContextTokens), text.Thousands(c.window), p.Level*100)
	}
	if cost, zero, ok := ledger.Cost([]ledger.Row{r}, c.priceBook()); ok {
		fmt.Fprintf(&b, "\nCost %s (without cache %s)", Dollars(cost), Dollars(zero))
	} else {
		b.WriteString("\nCost n/a (no price for this model)")
	}
	if r.DurationMS > 0 {
		fmt.Fprintf(&b, " · %s", Duration(time.Duration(r.DurationMS)*time.Millisecond))
	}
	if r.Rebuild != "" {
		fmt.Fprintf(&b, "\nAfter a %s: the history was rewritten", r.Rebuild)
	}
	if r.Fallback != "" {
		fmt.Fprintf(&b, "\nFell back %s: a new cache prefix", r.Fallback)
	}
	if r.Effort != "" {
		fmt.Fprintf(&b, "\nEffort %s", r.Effort)
	}
	if r.Drift != nil && r.Drift.Changed {
		fmt.Fprintf(&b, "\n%s", UpperFirst(r.Drift.String()))
	}
	return b.String()
}

// NearestAt returns the index of the point nearest to x on the plot.
func (c *Chart) NearestAt(x float32) int {
	return nearestPoint(ChartLayout(c.points, c.plotSize()).Xs, x)
}

func (c *Chart) plotSize() fyne.Size {
	if c.plot.Width > 0 {
		return c.plot
	}
	return fyne.NewSize(max(c.Size().Width, chartMinWidth), chartPlotH)
}

func (c *Chart) update() {
	c.points = chartPoints(c.rows, c.window)
	c.totals.SetText(c.TotalsText())
	c.Refresh()
}

// Tapped shows the nearest request's numbers in a popup.
func (c *Chart) Tapped(ev *fyne.PointEvent) {
	if ev.Position.Y > c.plotSize().Height {
		return
	}
	i := c.NearestAt(ev.Position.X)
	if i < 0 {
		return
	}
	cv := fyne.CurrentApp().Driver().CanvasForObject(c)
	if cv == nil {
		return
	}
	c.popup = widget.NewPopUp(container.NewPadded(widget.NewLabel(c.Details(i))), cv)
	c.popup.ShowAtPosition(ev.AbsolutePosition.Add(fyne.NewPos(-c.popup.MinSize().Width/2, 12)))
}

// CreateRenderer implements fyne.Widget.
func (c *Chart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c,
		bg:     canvas.NewRectangle(color.Transparent),
		half:   canvas.NewLine(color.Transparent),
		title:  canvas.NewText("Requests", color.Black),
		legend: canvas.NewText("", color.Black),
		hitLeg: canvas.NewText("", color.Black),
	}
	r.title.TextStyle.Bold = true
	r.Refresh()
	return r
}

type chartRenderer struct {
	c             *Chart
	bg            *canvas.Rectangle
	half          *canvas.Line
	title, legend *canvas.Text
	hitLeg        *canvas.Text
	level, hit    []*canvas.Line
	dots          []*canvas.Circle
	marks         []*canvas.Line
	objects       []fyne.CanvasObject
}

func (r *chartRenderer) MinSize() fyne.Size {
	th := theme.Size(theme.SizeNameText) * 1.4
	return fyne.NewSize(chartMinWidth, th+chartPlotH+r.c.totals.MinSize().Height)
}

func (r *chartRenderer) Layout(size fyne.Size) {
	th := theme.Size(theme.SizeNameText) * 1.4
	r.title.Move(fyne.NewPos(0, 0))
	r.title.Resize(fyne.NewSize(size.Width/2, th))
	hw := fyne.MeasureText(r.hitLeg.Text, r.hitLeg.TextSize, r.hitLeg.TextStyle).Width
	lw := fyne.MeasureText(r.legend.Text, r.legend.TextSize, r.legend.TextStyle).Width
	r.hitLeg.Move(fyne.NewPos(size.Width-hw, 0))
	r.hitLeg.Resize(fyne.NewSize(hw, th))
	r.legend.Move(fyne.NewPos(size.Width-hw-lw-8, 0))
	r.legend.Resize(fyne.NewSize(lw, th))

	top := th
	plot := fyne.NewSize(size.Width, chartPlotH)
	r.c.plot = plot
	r.bg.Move(fyne.NewPos(0, top))
	r.bg.Resize(plot)
	off := func(p fyne.Position) fyne.Position { return fyne.NewPos(p.X, p.Y+top) }
	// Lines are placed through their end points: Resize would move
	// Position2 instead of sizing a box.
	mid := top + plot.Height/2
	r.half.Position1, r.half.Position2 = fyne.NewPos(0, mid), fyne.NewPos(size.Width, mid)

	g := ChartLayout(r.c.points, plot)
	r.ensure(g)
	for i := range r.level {
		r.level[i].Position1, r.level[i].Position2 = off(g.Level[i]), off(g.Level[i+1])
	}
	k := 0
	for _, run := range g.Hit {
		for i := 0; i+1 < len(run); i++ {
			r.hit[k].Position1, r.hit[k].Position2 = off(run[i]), off(run[i+1])
			k++
		}
	}
	for i, p := range g.Level {
		d := r.dots[i]
		d.Position1 = off(p).SubtractXY(2, 2)
		d.Position2 = off(p).AddXY(2, 2)
	}
	for i, m := range g.Markers {
		r.marks[i].Position1 = fyne.NewPos(m.X, top)
		r.marks[i].Position2 = fyne.NewPos(m.X, top+plot.Height)
	}
	ts := r.c.totals.MinSize()
	r.c.totals.Move(fyne.NewPos(0, top+plot.Height))
	r.c.totals.Resize(fyne.NewSize(size.Width, max(ts.Height, size.Height-top-plot.Height)))
}

// ensure makes exactly as many line and dot objects as g needs.
func (r *chartRenderer) ensure(g ChartGeometry) {
	nLevel := max(len(g.Level)-1, 0)
	nHit := 0
	for _, run := range g.Hit {
		nHit += max(len(run)-1, 0)
	}
	grow := func(ls []*canvas.Line, n int, width float32) []*canvas.Line {
		for len(ls) < n {
			l := canvas.NewLine(color.Transparent)
			l.StrokeWidth = width
			ls = append(ls, l)
		}
		return ls[:n]
	}
	r.level = grow(r.level, nLevel, 2)
	r.hit = grow(r.hit, nHit, 1.5)
	r.marks = grow(r.marks, len(g.Markers), 1.5)
	for len(r.dots) < len(g.Level) {
		r.dots = append(r.dots, canvas.NewCircle(color.Transparent))
	}
	r.dots = r.dots[:len(g.Level)]

	levelC := theme.Color(theme.ColorNamePrimary)
	hitC := theme.Color(theme.ColorNameSuccess)
	for _, l := range r.level {
		l.StrokeColor = levelC
	}
	for _, l := range r.hit {
		l.StrokeColor = hitC
	}
	for _, d := range r.dots {
		d.FillColor = levelC
	}
	for i, m := range g.Markers {
		r.marks[i].StrokeColor = markerColor(m.Kind)
	}
	r.objects = []fyne.CanvasObject{r.bg, r.half, r.title, r.legend, r.hitLeg}
	for _, m := range r.marks {
		r.objects = append(r.objects, m)
	}
	for _, l := range r.level {
		r.objects = append(r.objects, l)
	}
	for _, l := range r.hit {
		r.objects = append(r.objects, l)
	}
	for _, d := range r.dots {
		r.objects = append(r.objects, d)
	}
	r.objects = append(r.objects, r.c.totals)
}

// markerColors are the colours of the markers: the warning colour for an
// unbooked drift, the foreground for a rebuild; a booked drift is muted.
var markerColors = map[MarkerKind]fyne.ThemeColorName{MarkerDrift: theme.ColorNameWarning, MarkerRebuild: theme.ColorNameForeground,
	MarkerFallback: theme.ColorNameError}

// markerColor is the colour of a marker of kind k.
func markerColor(k MarkerKind) color.Color {
	return colorOf(markerColors, k, theme.ColorNamePlaceHolder)
}

func (r *chartRenderer) Refresh() {
	fg := theme.Color(theme.ColorNameForeground)
	capt := theme.Size(theme.SizeNameCaptionText)
	r.title.Color, r.title.TextSize = fg, theme.Size(theme.SizeNameText)
	r.legend.Text, r.legend.Color, r.legend.TextSize = "— context", theme.Color(theme.ColorNamePrimary), capt
	r.hitLeg.Text, r.hitLeg.Color, r.hitLeg.TextSize = "— cache hit", theme.Color(theme.ColorNameSuccess), capt
	r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.bg.StrokeColor = theme.Color(theme.ColorNameSeparator)
	r.bg.StrokeWidth = 1
	r.half.StrokeColor = theme.Color(theme.ColorNameSeparator)
	r.half.StrokeWidth = 1
	r.Layout(r.c.Size())
	for _, o := range r.objects {
		if o != r.c.totals {
			o.Refresh()
		}
	}
}

func (r *chartRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *chartRenderer) Destroy()                     {}

var (
	_ fyne.WidgetRenderer = (*chartRenderer)(nil)
	_ fyne.Tappable       = (*Chart)(nil)
)
