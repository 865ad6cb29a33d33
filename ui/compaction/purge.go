package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/purge"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// PurgeView is the purge preview: the model's proposed changes and what
// was refused, with Apply and Cancel.
type PurgeView struct {
	widget.BaseWidget

	plan   rewrite.PurgePreview
	text   *widget.Label
	apply  *widget.Button
	cancel *widget.Button
	body   fyne.CanvasObject
	dlg    *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *PurgeView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.body) }

// Purge asks the model (off the UI goroutine) which messages of the shown
// session can go, then shows the plan. Stop cancels the question.
func (vs *Views) Purge() {
	s := vs.h.Current()
	if s == nil || s.Ops() == nil {
		return
	}
	ctx, ok := s.Begin("asking the model what to purge…")
	if !ok {
		return
	}
	ops := s.Ops()
	vs.h.Work(func() func() {
		plan, err := ops.PreviewPurge(ctx)
		return func() {
			if !s.End() {
				return
			}
			s.Idle()
			s.Run(tw.RunState{})
			switch {
			case errors.Is(err, context.Canceled):
				s.Run(tw.RunState{Phase: tw.RunStopped})
			case errors.Is(err, agent.ErrBusy):
				vs.h.Info("The session is busy with a turn; purge when it has finished.")
			case errors.Is(err, purge.ErrNothing):
				vs.h.Info("The model proposed nothing to purge; the history is unchanged.")
			case err != nil:
				vs.h.Error("Could not prepare the purge: " + err.Error())
			default:
				vs.showPurge(s, plan)
			}
		}
	})
}

// showPurge shows the plan with Apply / Cancel.
func (vs *Views) showPurge(s Session, plan rewrite.PurgePreview) *PurgeView {
	v := &PurgeView{plan: plan}
	v.text = &widget.Label{Text: purgeText(plan), TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapWord}
	head := boldLabel(fmt.Sprintf("History %s → %s tokens · %s", text.Thousands(plan.Before), text.Thousands(plan.After),
		text.Plural(len(plan.Changes), "change")))
	note := &widget.Label{Wrapping: fyne.TextWrapWord,
		Text: "Purging rewrites the history once: the next request misses the cache from the first changed message on."}
	v.apply = &widget.Button{Text: "Apply", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance, OnTapped: func() {
		v.dlg.Hide()
		vs.applyPurge(s, plan)
	}}
	if len(plan.Changes) == 0 {
		v.apply.Disable()
	}
	v.cancel = &widget.Button{Text: "Cancel", Icon: theme.CancelIcon(), OnTapped: func() { v.dlg.Hide() }}
	v.body = container.NewBorder(head, note, nil, nil, container.NewVScroll(v.text))
	v.ExtendBaseWidget(v)
	v.dlg = dialog.NewCustomWithoutButtons("Purge preview", v, vs.h.Window)
	v.dlg.SetButtons([]fyne.CanvasObject{v.cancel, v.apply})
	v.dlg.Resize(fyne.NewSize(760, 520))
	v.dlg.Show()
	return v
}

// purgeText lists a purge plan's changes, one a line, with what the
// engine refused and what it ignored; its numbers are written as the
// dialog's head writes them (the head gives the history's totals).
func purgeText(plan rewrite.PurgePreview) string {
	var b strings.Builder
	if len(plan.Changes) == 0 {
		b.WriteString("The model proposed no changes.\n")
	}
	for _, c := range plan.Changes {
		line := fmt.Sprintf("  shorten message %d (%s → %s tokens)", c.Msg, text.Thousands(c.Before), text.Thousands(c.After))
		if c.Action == "remove" {
			line = fmt.Sprintf("  remove  message %d (%s tokens)", c.Msg, text.Thousands(c.Before))
		}
		if c.Because != "asked" && c.Because != "" {
			line += " — " + c.Because
		}
		b.WriteString(line + "\n")
	}
	for _, r := range plan.Rejected {
		b.WriteString("  not applied: " + r + "\n")
	}
	for _, e := range plan.Errors {
		b.WriteString("  ignored: " + e + "\n")
	}
	return b.String()
}

// applyPurge applies the plan off the UI goroutine; the chat row comes
// from the engine's rebuild event.
func (vs *Views) applyPurge(s Session, plan rewrite.PurgePreview) {
	if !s.Shown() || s.Running() {
		return
	}
	s.Hold(true)
	ops := s.Ops()
	vs.h.Work(func() func() {
		err := ops.ApplyPurge(plan)
		level, exact := ops.ContextTokens()
		return func() {
			s.Hold(false)
			if !s.Shown() {
				return
			}
			s.Idle()
			if err != nil {
				vs.h.Error("The purge failed; the history is unchanged: " + err.Error())
				return
			}
			s.Level(level, exact)
		}
	})
}
