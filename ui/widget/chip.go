package widget

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
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
	Hit   float64 // percent of prompt tokens served from cache
}

// CacheStateFor computes the chip for a request's usage. It is a pure
// function so the thresholds can be tested on their edges.
func CacheStateFor(u agent.Usage) CacheState {
	if !u.CacheReported || u.PromptTokens <= 0 {
		return CacheState{Level: CacheHidden}
	}
	pct := float64(u.CacheHitTokens) * 100 / float64(u.PromptTokens)
	s := CacheState{Hit: pct, Text: "Cache " + Percent(pct)}
	switch {
	case u.First:
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

// levelColor is the chip's dot colour for a level.
func levelColor(l CacheLevel) color.Color {
	switch l {
	case CacheGreen:
		return theme.Color(theme.ColorNameSuccess)
	case CacheYellow:
		return theme.Color(theme.ColorNameWarning)
	case CacheRed:
		return theme.Color(theme.ColorNameError)
	default:
		return theme.Color(theme.ColorNameDisabled)
	}
}

// CacheChip shows the prompt-cache hit rate of the last request as a
// coloured dot and a percentage. Tapping it shows the hit and miss tokens
// and the session's overall ratio in a small popup. It is hidden when the
// backend reports no cache field.
type CacheChip struct {
	widget.BaseWidget

	state      CacheState
	last       agent.Usage
	sessionHit int
	sessionAll int
	rule       ledger.CacheRule // the cache rule the session's estimates assume

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

// SetSession sets the session totals (hit and prompt tokens over every
// request that reported cache fields).
func (c *CacheChip) SetSession(hit, prompt int) {
	c.sessionHit, c.sessionAll = hit, prompt
}

// Update shows the usage of the latest request and adds it to the session
// totals.
func (c *CacheChip) Update(u agent.Usage) {
	if u.CacheReported {
		c.sessionHit += u.CacheHitTokens
		c.sessionAll += u.PromptTokens
	}
	c.Set(u)
}

// Set shows u without changing the session totals.
func (c *CacheChip) Set(u agent.Usage) {
	c.last = u
	c.state = CacheStateFor(u)
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

// Reset hides the chip and clears the session totals.
func (c *CacheChip) Reset() {
	c.state, c.last, c.sessionHit, c.sessionAll = CacheState{}, agent.Usage{}, 0, 0
	c.Hide()
}

// State returns what the chip shows.
func (c *CacheChip) State() CacheState { return c.state }

// Details is the popup text: this request's hit and miss tokens and the
// session's overall ratio.
func (c *CacheChip) Details() string {
	u := c.last
	s := fmt.Sprintf("This request: %s tokens from cache, %s not cached (of %s prompt tokens).",
		text.Thousands(u.CacheHitTokens), text.Thousands(u.CacheMissTokens), text.Thousands(u.PromptTokens))
	if u.First {
		s += "\nThe session's first request always starts with a cold cache."
	}
	if c.sessionAll > 0 {
		s += fmt.Sprintf("\nSession: %s of %s prompt tokens from cache (%s).",
			text.Thousands(c.sessionHit), text.Thousands(c.sessionAll), Percent(float64(c.sessionHit)*100/float64(c.sessionAll)))
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
