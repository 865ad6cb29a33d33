package ui

import (
	"context"
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/demo"
	tw "github.com/tally-dev/tally/ui/widget"
)

// startNewCycle asks for confirmation, then closes the current cycle off
// the UI goroutine: the model writes its hand-off brief, the cycle goes to
// the archive and the next one starts from the brief and the checklist.
// The chat shows the result from the engine's rebuild event.
func (u *UI) startNewCycle() {
	live := u.live
	if live == nil || live.ops == nil || live.job.running {
		return
	}
	msg := "Archive this cycle and start a new one?\n\nThe model writes a hand-off brief first; the next request starts from the brief and the checklist, so it misses the cache once. The archive stays searchable."
	dialog.ShowConfirm("New cycle", msg, func(ok bool) {
		if ok {
			u.runNewCycle(live)
		}
	}, u.win)
}

func (u *UI) runNewCycle(live *liveSession) {
	ctx, ok := u.beginBusy(live, "writing the hand-off brief…")
	if !ok {
		return
	}
	ops := live.ops
	u.bridge.Work(func() func() {
		err := ops.NewCycle(ctx)
		return func() {
			if !u.endBusy(live) {
				return
			}
			u.setIdle()
			switch {
			case errors.Is(err, context.Canceled):
				u.footer.State.Run = tw.RunState{Phase: tw.RunStopped}
				u.footer.Update()
			case errors.Is(err, agent.ErrBusy):
				u.banner.ShowInfo("The session is busy with a turn; start a new cycle when it has finished.")
			case err != nil:
				u.banner.ShowError("Could not start a new cycle: " + err.Error())
			default:
				u.refreshThresholds(live)
				u.sessions.refresh() // the list shows the cycle number
			}
		}
	})
}

// beginBusy marks live as running a maintenance job (compaction, purge, a
// new cycle) that Stop can cancel: it disables Send and the other actions
// and shows state in the footer. It reports false when live is not the open
// session or is already busy.
func (u *UI) beginBusy(live *liveSession, state string) (context.Context, bool) {
	if u.live != live || live == nil || live.job.running {
		return nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	live.job = job{running: true, cancel: cancel}
	u.input.send.Disable()
	u.input.stop.Enable()
	u.setBusyButtons(true)
	u.footer.State.Run = tw.Busy(state)
	u.footer.Update()
	return ctx, true
}

// refreshThresholds re-reads the level after a rewrite.
func (u *UI) refreshThresholds(live *liveSession) {
	if live.ops == nil {
		return
	}
	level, exact := live.ops.ContextTokens()
	u.side.gauge.SetLevel(level, live.info.window, exact)
}

// demoSuggestions is the row of the demo's follow-up prompts, shown above
// the prompt entry in demo sessions only.
func (u *UI) demoSuggestions() *fyne.Container {
	row := container.NewHBox(&widget.Label{Text: "Try:", Importance: widget.LowImportance})
	labels := map[string]string{demo.ExplorePrompt: "Explore the project (fills the window)", demo.RecallPrompt: "Ask the archive (after New cycle)",
		demo.DelegatePrompt: "Delegate to two sub-agents"}
	for _, p := range demo.FollowUps {
		prompt := p
		row.Add(&widget.Button{Text: labels[prompt], Importance: widget.LowImportance, OnTapped: func() {
			if u.live == nil || u.live.job.running {
				return
			}
			u.input.prompt.SetText(prompt)
			u.send()
		}})
	}
	return row
}

// setSuggestions enables the demo's suggested prompts when a turn can
// start, and says why they are off while one runs.
func (u *UI) setSuggestions(on bool) {
	if u.input.suggest == nil {
		return
	}
	for i, o := range u.input.suggest.Objects {
		switch v := o.(type) {
		case *widget.Label:
			if i == 0 {
				v.SetText("Try:")
				if !on {
					v.SetText("Try (when the turn ends):")
				}
			}
		case *widget.Button:
			enableIf(v, on)
		}
	}
}
