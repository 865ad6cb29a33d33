package compaction

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/rewrite"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Notice is the card above the chat that announces an automatic
// compaction before it runs: the level, what it would keep verbatim,
// summarise, drop but keep recallable, and lose, with Preview and Not now.
// It never blocks the turn; the engine goes on while it is shown.
type Notice struct {
	widget.BaseWidget

	label   *widget.Label
	preview *widget.Button
	notNow  *widget.Button
	closeB  *widget.Button
	plan    compact.Plan
}

// newNotice returns a hidden notice whose buttons call onPreview and
// onNotNow.
func newNotice(onPreview, onNotNow func()) *Notice {
	n := &Notice{label: &widget.Label{Wrapping: fyne.TextWrapWord}}
	n.preview = &widget.Button{Text: "Preview", Icon: theme.VisibilityIcon(), OnTapped: onPreview}
	n.notNow = &widget.Button{Text: "Not now", Importance: widget.LowImportance, OnTapped: onNotNow}
	n.closeB = &widget.Button{Icon: theme.CancelIcon(), Importance: widget.LowImportance, OnTapped: func() { n.Hide() }}
	n.ExtendBaseWidget(n)
	n.Hide()
	return n
}

// noticeText is the notice's sentence: "Context at 91 % of the
// auto-compaction threshold — the next compaction keeps 12 messages
// verbatim, summarises 40, 40 recallable, 0 gone."
func noticeText(n rewrite.Notice) string {
	f := n.Plan.Fidelity
	return fmt.Sprintf("Context at %d %% of the auto-compaction threshold (%s of %s tokens) — the next compaction keeps %d messages verbatim, summarises %d, %d recallable, %d gone.",
		n.Percent(), tw.TokensShort(n.Level), tw.TokensShort(n.Threshold), f.Verbatim, f.Summarised, f.Recallable, f.Gone)
}

// Announce puts n's announcement on the card and shows it.
func (c *Notice) Announce(n rewrite.Notice) {
	c.plan = n.Plan
	c.label.SetText(noticeText(n))
	c.notNow.Enable()
	c.notNow.SetText("Not now")
	c.Show()
	c.Refresh()
}

// postponed says the answer was taken.
func (c *Notice) postponed() {
	c.label.SetText("Not now: the automatic compaction waits until the context has grown a further 10 % past the threshold (it still runs at the ceiling).")
	c.notNow.Disable()
	c.notNow.SetText("Postponed")
}

// Text returns the sentence shown, or "" when hidden.
func (c *Notice) Text() string {
	if !c.Visible() {
		return ""
	}
	return c.label.Text
}

// CreateRenderer implements fyne.Widget.
func (c *Notice) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	row := container.NewBorder(nil, nil, nil, container.NewHBox(c.preview, c.notNow, c.closeB), c.label)
	return widget.NewSimpleRenderer(container.NewStack(bg, container.NewPadded(row)))
}

// previewNotice opens the compaction preview with the notice's plan.
// While the turn runs the compaction cannot be applied by hand (it runs on
// its own at the threshold), so Apply is disabled; between turns Apply
// compacts now.
func (vs *Views) previewNotice() {
	s := vs.h.Current()
	if s == nil {
		return
	}
	v, _ := vs.ShowPreview(vs.Notice.plan, nil, func(ok bool) {
		if ok && s.Shown() && !s.Running() {
			vs.Notice.Hide()
			vs.apply(s)
		}
	})
	if s.Running() {
		v.apply.Disable()
		v.apply.SetText("Runs by itself at the threshold")
	}
}

// postpone answers the notice with "Not now", off the UI goroutine: the
// engine's call does not wait for the turn, but it is the engine's.
func (vs *Views) postpone() {
	s := vs.h.Current()
	if s == nil || s.Ops() == nil {
		return
	}
	ops := s.Ops()
	vs.Notice.notNow.Disable()
	vs.h.Work(func() func() {
		ops.PostponeCompaction()
		return func() {
			if s.Shown() {
				vs.Notice.postponed()
			}
		}
	})
}
