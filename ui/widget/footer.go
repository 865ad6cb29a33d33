package widget

import (
	"fmt"
	"math"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// FooterState is the human footer: volatile facts for the person at the
// screen that are never sent to the model.
type FooterState struct {
	Model string
	// Effort is the session's reasoning effort ("" for the provider's
	// default, not shown); Fallback names the model a fallback went on
	// with, "old → new", since the switch.
	Effort       string
	Fallback     string
	RetryAt      time.Time // when a pending retry fires; zero when none
	RetryAttempt int
	RetryMax     int
	Cost         float64
	CostKnown    bool // false: no price for some request, shown as "n/a"
	LastDuration time.Duration
	Run          RunState // idle, running step 7/50, stopped ...
	WarmUp       string   // the warm-up request's cost, e.g. "warm-up $0.0004"
	// Drift is the alert of an unbooked prefix change; Alerts are the
	// engine's alert lines (loop guard, compaction breaker). Both are shown
	// apart from the parts, in warning styling.
	Drift  string
	Alerts []string
}

// AlertText joins the drift alert and the engine's alerts.
func (s FooterState) AlertText() string {
	var a []string
	if s.Drift != "" {
		a = append(a, s.Drift)
	}
	a = append(a, s.Alerts...)
	return strings.Join(a, " · ")
}

// Parts returns the footer's pieces as shown at time now.
func (s FooterState) Parts(now time.Time) []string {
	var p []string
	if s.Model != "" {
		p = append(p, s.Model)
	}
	if s.Fallback != "" {
		p = append(p, "fell back "+s.Fallback)
	}
	if s.Effort != "" && s.Model != "" {
		p = append(p, "effort "+s.Effort)
	}
	if !s.RetryAt.IsZero() {
		left := int(math.Ceil(s.RetryAt.Sub(now).Seconds()))
		if left < 0 {
			left = 0
		}
		p = append(p, fmt.Sprintf("retry in %d s (%d of %d)", left, s.RetryAttempt, s.RetryMax))
	}
	switch {
	case s.Model == "": // no session shown
	case s.CostKnown:
		p = append(p, "cost "+Dollars(s.Cost))
	default:
		p = append(p, "cost n/a")
	}
	if s.WarmUp != "" {
		p = append(p, s.WarmUp)
	}
	if s.LastDuration > 0 {
		p = append(p, "last request "+Duration(s.LastDuration))
	}
	if r := s.Run.String(); r != "" {
		p = append(p, r)
	}
	return p
}

// Text joins the parts with " · ".
func (s FooterState) Text(now time.Time) string { return strings.Join(s.Parts(now), " · ") }

// Footer displays a FooterState and counts a pending retry down.
type Footer struct {
	widget.BaseWidget

	State FooterState
	label *widget.Label
	alert *alertLabel
	icon  *widget.Icon
	close *widget.Button
	box   *fyne.Container
	pop   *widget.PopUp                    // the whole alert, once clicked
	tick  func(d time.Duration, fn func()) // schedules fn on the UI goroutine
}

// NewFooter returns an idle footer. after schedules a function on the UI
// goroutine (Bridge.After), used for the retry countdown.
func NewFooter(after func(time.Duration, func())) *Footer {
	f := &Footer{label: widget.NewLabel(""), tick: after}
	f.label.Truncation = fyne.TextTruncateEllipsis
	f.alert = &alertLabel{onTap: f.ShowAlert}
	f.alert.Importance, f.alert.TextStyle, f.alert.Truncation = widget.WarningImportance, fyne.TextStyle{Bold: true}, fyne.TextTruncateEllipsis
	f.alert.ExtendBaseWidget(f.alert)
	f.icon = widget.NewIcon(theme.WarningIcon())
	f.close = &widget.Button{Icon: theme.CancelIcon(), Importance: widget.LowImportance, OnTapped: f.DismissAlerts}
	f.box = container.NewBorder(nil, nil, f.icon, f.close, f.alert)
	f.State.Run = RunState{}
	f.ExtendBaseWidget(f)
	f.Update()
	return f
}

// Update re-renders the footer from State.
func (f *Footer) Update() {
	f.label.SetText(f.State.Text(time.Now()))
	a := f.State.AlertText()
	f.alert.SetText(a)
	ShowIf(f.box, a != "")
}

// Alert returns the alert text as shown ("" when hidden).
func (f *Footer) Alert() string {
	if !f.box.Visible() {
		return ""
	}
	return f.alert.Text
}

// ShowAlert opens a pop-up over the footer with the whole alert text,
// wrapped; a click outside it closes it.
func (f *Footer) ShowAlert() {
	a := f.State.AlertText()
	c := fyne.CurrentApp().Driver().CanvasForObject(f)
	if a == "" || c == nil {
		return
	}
	body := &widget.Label{Text: a, Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance, TextStyle: fyne.TextStyle{Bold: true}}
	var pop *widget.PopUp
	closeB := &widget.Button{Icon: theme.CancelIcon(), Importance: widget.LowImportance, OnTapped: func() { pop.Hide() }}
	pop = widget.NewPopUp(container.NewBorder(nil, nil, widget.NewIcon(theme.WarningIcon()), closeB, body), c)
	w := min(c.Size().Width-2*theme.Padding(), max(f.Size().Width*0.6, 320))
	pop.Resize(fyne.NewSize(w, pop.MinSize().Height))
	h := pop.Content.MinSize().Height + 2*theme.Padding()
	for range 3 { // the wrapped label's height follows the width it gets
		pop.Resize(fyne.NewSize(w, h))
		h = pop.Content.MinSize().Height + 2*theme.Padding()
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(f)
	pop.ShowAtPosition(fyne.NewPos(max(pos.X+f.Size().Width-w, 0), max(pos.Y-h, 0)))
	f.pop = pop
}

// AlertPopUp returns the pop-up ShowAlert opened, nil before.
func (f *Footer) AlertPopUp() *widget.PopUp { return f.pop }

// DismissAlerts hides the drift alert and the alert lines until new ones
// arrive.
func (f *Footer) DismissAlerts() {
	f.State.Drift, f.State.Alerts = "", nil
	f.Update()
}

// Text returns the footer text as shown.
func (f *Footer) Text() string { return f.label.Text }

// StartRetry shows a retry countdown that ticks every second until
// ClearRetry or until the retry fires.
func (f *Footer) StartRetry(wait time.Duration, attempt, maxAttempts int) {
	f.State.RetryAt = time.Now().Add(wait)
	f.State.RetryAttempt, f.State.RetryMax = attempt, maxAttempts
	f.Update()
	f.scheduleTick()
}

func (f *Footer) scheduleTick() {
	if f.tick == nil {
		return
	}
	at := f.State.RetryAt
	f.tick(time.Second, func() {
		if f.State.RetryAt.IsZero() || !f.State.RetryAt.Equal(at) {
			return
		}
		if time.Now().After(at) {
			f.ClearRetry()
			return
		}
		f.Update()
		f.scheduleTick()
	})
}

// ClearRetry removes the retry countdown.
func (f *Footer) ClearRetry() {
	if f.State.RetryAt.IsZero() {
		return
	}
	f.State.RetryAt = time.Time{}
	f.Update()
}

// CreateRenderer implements fyne.Widget.
func (f *Footer) CreateRenderer() fyne.WidgetRenderer {
	// The alert takes at most half of the footer; the facts the rest.
	row := container.New(&footerLayout{}, f.label, f.box)
	return widget.NewSimpleRenderer(container.NewPadded(row))
}

// footerLayout puts the facts on the left and the alert, when shown, on
// the right, giving the alert up to half the width.
type footerLayout struct{}

func (footerLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	label, alert := objs[0], objs[1]
	aw := float32(0)
	if alert.Visible() {
		// The alert label truncates, so its minimum is only an ellipsis:
		// measure the whole text, and give it up to 60 % of the width.
		aw = min(alert.MinSize().Width+alertTextWidth(alert), size.Width*0.6)
		alert.Resize(fyne.NewSize(aw, size.Height))
		alert.Move(fyne.NewPos(size.Width-aw, 0))
	}
	label.Resize(fyne.NewSize(size.Width-aw, size.Height))
	label.Move(fyne.NewPos(0, 0))
}

func (footerLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	h := objs[0].MinSize().Height
	if objs[1].Visible() {
		h = max(h, objs[1].MinSize().Height)
	}
	return fyne.NewSize(100, h)
}

// alertTextWidth is the width of the whole alert text in the footer's
// alert row (its icon and close button come on top).
func alertTextWidth(box fyne.CanvasObject) float32 {
	for _, o := range box.(*fyne.Container).Objects {
		if a, ok := o.(*alertLabel); ok {
			return fyne.MeasureText(a.Text, theme.TextSize(), a.TextStyle).Width + 2*theme.InnerPadding()
		}
	}
	return 0
}

// alertLabel is the footer's alert line; a click shows it whole.
type alertLabel struct {
	widget.Label
	onTap func()
}

// Tapped implements fyne.Tappable.
func (a *alertLabel) Tapped(*fyne.PointEvent) {
	if a.onTap != nil {
		a.onTap()
	}
}

// Cursor implements desktop.Cursorable: the alert is clickable.
func (a *alertLabel) Cursor() desktop.Cursor { return desktop.PointerCursor }
