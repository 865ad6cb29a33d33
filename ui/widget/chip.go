package widget

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/internal/text"
)

// CacheLevel is the colour class of the cache chip.
type CacheLevel int

// Cache levels, from the DESIGN thresholds: red below 40 %, yellow below
// 80 %, green otherwise; a session's first request is "cold", never red.
const (
	CacheHidden CacheLevel = iota // the backend reports no cache field
	CacheCold                     // the session's first request: neutral
	CacheRed
	CacheYellow
	CacheGreen
)

// String names the level.
func (l CacheLevel) String() string {
	return [...]string{"hidden", "cold", "red", "yellow", "green"}[l]
}

// CacheState is what the chip shows for one request.
type CacheState struct {
	Level CacheLevel
	Text  string  // e.g. "Cache 99.7 %"
	Hit   float64 // the percentage shown: the row's HitRatio, rounded by RoundPercent
}

// CacheStateFor computes the chip for request r; first says it is the
// first request since the session was opened, whose cache may be cold.
// The share is the ledger's (Row.HitRatio), rounded once as it is shown,
// and that one number decides both the text and the level: the chip never
// says "80 %" in the yellow of 79.96 %. It is a pure function so the
// thresholds can be tested on their edges.
func CacheStateFor(r ledger.Row, first bool) CacheState {
	if !r.CacheReported || r.PromptTokens <= 0 {
		return CacheState{Level: CacheHidden}
	}
	pct := RoundPercent(r.HitRatio() * 100)
	s := CacheState{Hit: pct, Text: "Cache " + Percent(pct)}
	switch {
	case first:
		s.Level, s.Text = CacheCold, "Cache cold · "+Percent(pct)
	case pct >= 80:
		s.Level = CacheGreen
	case pct >= 40:
		s.Level = CacheYellow
	default:
		s.Level = CacheRed
	}
	return s
}

// levelColors are the chip's dot colours; a cold or hidden chip's dot is
// in the disabled colour.
var levelColors = map[CacheLevel]fyne.ThemeColorName{
	CacheGreen: theme.ColorNameSuccess, CacheYellow: theme.ColorNameWarning, CacheRed: theme.ColorNameError}

// levelColor is the chip's dot colour for level l.
func levelColor(l CacheLevel) color.Color { return colorOf(levelColors, l, theme.ColorNameDisabled) }

// missOf is the ledger's count of r's prompt tokens not served from the
// cache (a backend that reports no cache field counts all as misses).
func missOf(r ledger.Row) int {
	return ledger.Sum([]ledger.Row{r}, ledger.OnePrice(ledger.Price{}, false)).Miss
}

// CacheChip shows the prompt-cache hit rate of the last request as a
// coloured dot and a percentage. Tapping it shows the hit and miss tokens
// and the session's overall ratio in a small popup. It is hidden when the
// backend reports no cache field. It displays the rows and totals it is
// given and keeps no count of its own.
type CacheChip struct {
	widget.BaseWidget

	state   CacheState
	last    ledger.Row
	first   bool
	session ledger.Totals
	rule    ledger.CacheRule // the cache rule the session's estimates assume

	dot   *canvas.Circle
	label *widget.Label
	popup *widget.PopUp
}

// NewCacheChip returns a hidden chip.
func NewCacheChip() *CacheChip {
	c := &CacheChip{dot: canvas.NewCircle(levelColor(CacheCold)), label: widget.NewLabel("")}
	c.ExtendBaseWidget(c)
	c.Hide()
	return c
}

// SetSession sets the session totals the popup names (ledger.Sum over the
// session's rows).
func (c *CacheChip) SetSession(t ledger.Totals) { c.session = t }

// Set shows request r (see CacheStateFor for first); a request without
// cache figures hides the chip.
func (c *CacheChip) Set(r ledger.Row, first bool) {
	c.last, c.first = r, first
	c.state = CacheStateFor(r, first)
	if c.state.Level == CacheHidden {
		c.Hide()
		return
	}
	c.dot.FillColor = levelColor(c.state.Level)
	c.label.SetText(c.state.Text)
	c.Show()
	c.Refresh()
}

// SetRule sets the provider cache rule the popup names.
func (c *CacheChip) SetRule(r ledger.CacheRule) { c.rule = r }

// Reset hides the chip and forgets the request and the session totals.
func (c *CacheChip) Reset() {
	c.state, c.last, c.first, c.session = CacheState{}, ledger.Row{}, false, ledger.Totals{}
	c.Hide()
}

// State returns what the chip shows.
func (c *CacheChip) State() CacheState { return c.state }

// Details is the popup text: this request's hit and miss tokens and the
// session's overall ratio.
func (c *CacheChip) Details() string {
	r := c.last
	s := fmt.Sprintf("This request: %s tokens from cache, %s not cached (of %s prompt tokens).",
		text.Thousands(r.CacheHitTokens), text.Thousands(missOf(r)), text.Thousands(r.PromptTokens))
	if c.first {
		s += "\nThe session's first request always starts with a cold cache."
	}
	if t := c.session; t.Prompt > 0 {
		s += fmt.Sprintf("\nSession: %s of %s prompt tokens from cache (%s).",
			text.Thousands(t.Hit), text.Thousands(t.Prompt), Percent(t.HitRatio*100))
	}
	if c.rule != "" {
		s += "\nCost estimates assume the provider caches " + c.rule.Describe() + " (Settings › Cache rule)."
	}
	return s
}

// Tapped shows the details popup.
func (c *CacheChip) Tapped(*fyne.PointEvent) {
	cv := fyne.CurrentApp().Driver().CanvasForObject(c)
	if cv == nil {
		return
	}
	var content fyne.CanvasObject = container.NewPadded(widget.NewLabel(c.Details()))
	c.popup = widget.NewPopUp(content, cv)
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(c)
	c.popup.ShowAtPosition(pos.Add(fyne.NewPos(0, c.Size().Height)))
}

// CreateRenderer draws the dot and the label.
func (c *CacheChip) CreateRenderer() fyne.WidgetRenderer {
	size := theme.Size(theme.SizeNameText)
	dot := container.NewGridWrap(fyne.NewSize(size*0.8, size*0.8), c.dot)
	return widget.NewSimpleRenderer(container.NewHBox(container.NewCenter(dot), c.label))
}

var _ fyne.Tappable = (*CacheChip)(nil)
