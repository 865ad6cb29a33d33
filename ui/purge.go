package ui

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

// purgeView is the purge preview: the model's proposed changes and what
// was refused, with Apply and Cancel.
type purgeView struct {
	widget.BaseWidget

	plan   rewrite.PurgePreview
	text   *widget.Label
	apply  *widget.Button
	cancel *widget.Button
	body   fyne.CanvasObject
	dlg    *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *purgeView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.body) }

// startPurge asks the model (off the UI goroutine) which messages can go,
// then shows the plan. Stop cancels the question.
func (u *UI) startPurge() {
	live := u.live
	if live == nil || live.ops == nil {
		return
	}
	ctx, ok := u.beginBusy(live, "asking the model what to purge…")
	if !ok {
		return
	}
	ops := live.ops
	u.bridge.Work(func() func() {
		plan, err := ops.PreviewPurge(ctx)
		return func() {
			if !u.endBusy(live) {
				return
			}
			u.setBusyButtons(false)
			u.setIdleButtons()
			u.footer.State.Run = tw.RunState{}
			u.footer.Update()
			switch {
			case errors.Is(err, context.Canceled):
				u.footer.State.Run = tw.RunState{Phase: tw.RunStopped}
				u.footer.Update()
			case errors.Is(err, agent.ErrBusy):
				u.banner.ShowInfo("The session is busy with a turn; purge when it has finished.")
			case errors.Is(err, purge.ErrNothing):
				u.banner.ShowInfo("The model proposed nothing to purge; the history is unchanged.")
			case err != nil:
				u.banner.ShowError("Could not prepare the purge: " + err.Error())
			default:
				u.showPurgeDialog(live, plan)
			}
		}
	})
}

// showPurgeDialog shows the plan with Apply / Cancel.
func (u *UI) showPurgeDialog(live *liveSession, plan rewrite.PurgePreview) *purgeView {
	v := &purgeView{plan: plan}
	v.text = &widget.Label{Text: purgeText(plan), TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapWord}
	head := boldLabel(fmt.Sprintf("History %s → %s tokens · %s", text.Thousands(plan.Before), text.Thousands(plan.After),
		text.Plural(len(plan.Changes), "change")))
	note := &widget.Label{Wrapping: fyne.TextWrapWord,
		Text: "Purging rewrites the history once: the next request misses the cache from the first changed message on."}
	v.apply = &widget.Button{Text: "Apply", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance, OnTapped: func() {
		v.dlg.Hide()
		u.applyPurge(live, plan)
	}}
	if len(plan.Changes) == 0 {
		v.apply.Disable()
	}
	v.cancel = &widget.Button{Text: "Cancel", Icon: theme.CancelIcon(), OnTapped: func() { v.dlg.Hide() }}
	v.body = container.NewBorder(head, note, nil, nil, container.NewVScroll(v.text))
	v.ExtendBaseWidget(v)
	v.dlg = dialog.NewCustomWithoutButtons("Purge preview", v, u.win)
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
func (u *UI) applyPurge(live *liveSession, plan rewrite.PurgePreview) {
	if u.live != live || live.job.running {
		return
	}
	live.job.running = true
	u.input.send.Disable()
	u.setBusyButtons(true)
	ops := live.ops
	u.bridge.Work(func() func() {
		err := ops.ApplyPurge(plan)
		level, exact := ops.ContextTokens()
		return func() {
			live.job.running = false
			if u.live != live {
				return
			}
			u.setBusyButtons(false)
			u.setIdleButtons()
			if err != nil {
				u.banner.ShowError("The purge failed; the history is unchanged: " + err.Error())
				return
			}
			u.side.gauge.SetLevel(level, live.info.window, exact)
		}
	})
}
