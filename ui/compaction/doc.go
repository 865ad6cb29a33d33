// Package compaction is the window's views of rewriting and browsing a
// session's history: the compaction preview (layers, before and after,
// pins and the cache cost of applying) with Apply, the notice of a coming
// automatic compaction, the purge preview, starting a new cycle and the
// archive of closed cycles.
//
// It never sees the window: the views get a Host of callbacks, and the
// session they act on as a Session. The engine is reached only through
// Session.Ops, off the UI goroutine, through Host.Work; widgets are
// touched only on the UI goroutine. The package never starts a goroutine
// or calls fyne.Do itself (Asker, which the engine calls, posts through
// the function it is given). Nothing it shows is sent to the model.
package compaction

import (
	"context"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/engine/ledger"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Host is what the views get from the window. Its functions are called
// on the UI goroutine.
type Host struct {
	// Window holds the dialogs.
	Window fyne.Window
	// Work runs work off the UI goroutine, then the function it returns
	// (if any) on the UI goroutine, in that order.
	Work func(work func() (apply func()))
	// Price is the shown session's model price, and whether it has one.
	Price func() (ledger.Price, bool)
	// Info and Error say msg in the window's banner.
	Info, Error func(msg string)
	// Current is the session shown, nil when none is.
	Current func() Session
	// Listed says the session list changed (a new cycle's number).
	Listed func()
}

// Session is an open session as the window keeps it: the engine calls
// and the window's state around a job. Its methods are called on the UI
// goroutine.
type Session interface {
	// Ops are the session's engine calls; nil while it is not open.
	Ops() Ops
	// Shown reports whether the session is still the one shown.
	Shown() bool
	// Running reports whether a turn or a job runs in it.
	Running() bool
	// Begin starts a job that Stop cancels: Send and the actions are
	// off and the footer says state. It reports false when the session
	// is not shown or already busy.
	Begin(state string) (context.Context, bool)
	// End ends the job Begin started and reports whether the session is
	// still shown; a hidden one is closed.
	End() bool
	// Hold marks the session busy with a job Stop cannot cancel (Send
	// and the actions off), or, with false, no longer busy.
	Hold(busy bool)
	// Actions turns the session's actions off while busy, else on as
	// the session allows.
	Actions(busy bool)
	// Idle turns Send, Stop and the actions back as an idle session has
	// them, and clears the footer's run state unless it says how a run
	// ended.
	Idle()
	// Run shows r as the footer's run state.
	Run(r tw.RunState)
	// Level shows the size of the context, exact or estimated.
	Level(tokens int, exact bool)
	// Notice adds a line of the app's own to the chat.
	Notice(text string)
}

// Views are the window's compaction, purge, cycle and archive views, and
// the notice card of a coming automatic compaction.
type Views struct {
	h Host
	// Notice is the card above the chat that announces an automatic
	// compaction; it is hidden until the engine announces one.
	Notice *Notice
}

// New returns the views the window's actions open.
func New(h Host) *Views {
	v := &Views{h: h}
	v.Notice = newNotice(v.previewNotice, v.postpone)
	return v
}
