package compaction

import (
	"context"
	"errors"

	"fyne.io/fyne/v2/dialog"

	"github.com/tally-dev/tally/engine/agent"
	tw "github.com/tally-dev/tally/ui/widget"
)

// NewCycle asks for confirmation, then closes the shown session's cycle
// off the UI goroutine: the model writes its hand-off brief, the cycle
// goes to the archive and the next one starts from the brief and the
// checklist. The chat shows the result from the engine's rebuild event.
func (vs *Views) NewCycle() {
	s := vs.h.Current()
	if s == nil || s.Ops() == nil || s.Running() {
		return
	}
	msg := "Archive this cycle and start a new one?\n\nThe model writes a hand-off brief first; the next request starts from the brief and the checklist, so it misses the cache once. The archive stays searchable."
	dialog.ShowConfirm("New cycle", msg, func(ok bool) {
		if ok {
			vs.runNewCycle(s)
		}
	}, vs.h.Window)
}

func (vs *Views) runNewCycle(s Session) {
	ctx, ok := s.Begin("writing the hand-off brief…")
	if !ok {
		return
	}
	ops := s.Ops()
	vs.h.Work(func() func() {
		err := ops.NewCycle(ctx)
		var level int
		var exact bool
		if err == nil {
			level, exact = ops.ContextTokens() // the level after the rewrite
		}
		return func() {
			if !s.End() {
				return
			}
			s.Idle()
			switch {
			case errors.Is(err, context.Canceled):
				s.Run(tw.RunState{Phase: tw.RunStopped})
			case errors.Is(err, agent.ErrBusy):
				vs.h.Info("The session is busy with a turn; start a new cycle when it has finished.")
			case err != nil:
				vs.h.Error("Could not start a new cycle: " + err.Error())
			default:
				s.Level(level, exact)
				vs.h.Listed() // the list shows the cycle number
			}
		}
	})
}
