package compaction

import (
	"context"
	"errors"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Compact previews a manual compaction of the shown session off the UI
// goroutine and opens the preview; Apply runs it.
func (vs *Views) Compact() {
	s := vs.h.Current()
	if s == nil || s.Ops() == nil || s.Running() {
		return
	}
	ops := s.Ops()
	s.Actions(true)
	vs.h.Work(func() func() {
		plan, err := ops.PreviewCompaction()
		var msgs []transcript.Message
		if err == nil {
			msgs = ops.Messages()
		}
		return func() {
			if !s.Shown() {
				return
			}
			s.Actions(s.Running())
			switch {
			case errors.Is(err, rewrite.ErrNothingToCompact):
				vs.h.Info("There is nothing to compact yet: the history has no messages that can be cleared or summarised.")
			case err != nil:
				vs.h.Error("Could not preview the compaction: " + err.Error())
			default:
				vs.ShowPreview(plan, msgs, func(ok bool) {
					if ok {
						vs.apply(s)
					}
				})
			}
		}
	})
}

// apply runs the compaction off the UI goroutine. Stop cancels it (a
// summary request may take a while); the chat row comes from the
// engine's rebuild event.
func (vs *Views) apply(s Session) {
	ctx, ok := s.Begin("compacting…")
	if !ok {
		return
	}
	ops := s.Ops()
	vs.h.Work(func() func() {
		_, err := ops.Compact(ctx)
		level, exact := ops.ContextTokens()
		return func() { vs.compacted(s, err, level, exact) }
	})
}

// compacted shows how a compaction ended.
func (vs *Views) compacted(s Session, err error, level int, exact bool) {
	if !s.End() {
		return
	}
	switch {
	case errors.Is(err, context.Canceled):
		s.Run(tw.RunState{Phase: tw.RunStopped})
		s.Notice("Compaction stopped; the history is unchanged.")
	case errors.Is(err, rewrite.ErrNothingToCompact):
		s.Run(tw.RunState{})
		vs.h.Info("There was nothing to compact; the history is unchanged.")
	case errors.Is(err, agent.ErrBusy):
		s.Run(tw.RunState{})
		vs.h.Info("The session is busy with a turn; compact when it has finished.")
	case err != nil:
		s.Run(tw.RunState{Phase: tw.RunFailed})
		vs.h.Error("The compaction failed: " + err.Error())
	default:
		s.Run(tw.RunState{})
	}
	s.Level(level, exact)
	s.Idle()
}

// Asker implements rewrite.Asker for "ask" mode: the engine's request
// opens the preview dialog, and the engine goroutine waits until the
// user answers or the turn is stopped.
type Asker struct {
	// Do runs a function on the UI goroutine (the window's Bridge.Do).
	Do func(func())
	// Show opens the dialog on the UI goroutine and returns a function
	// that closes it unanswered.
	Show func(plan compact.Plan, answer func(bool)) func()
}

// AskCompaction implements rewrite.Asker.
func (a *Asker) AskCompaction(ctx context.Context, plan compact.Plan) (bool, error) {
	ch := make(chan bool, 1)
	var closeFn func()
	a.Do(func() {
		closeFn = a.Show(plan, func(ok bool) {
			select {
			case ch <- ok:
			default:
			}
		})
	})
	select {
	case ok := <-ch:
		return ok, nil
	case <-ctx.Done():
		a.Do(func() {
			if closeFn != nil {
				closeFn()
			}
		})
		return false, ctx.Err()
	}
}

var _ rewrite.Asker = (*Asker)(nil)
