// Package rewind is the window's views for undoing the agent's changes:
// "Rewind to here…" on each of the user's messages (files, conversation,
// or both, back to the start of that turn), and the Changes view (every
// file the session changed, with its diff and its language servers'
// errors and warnings; revert one file or all). Both ask before
// overwriting a file that was changed outside Tally since the agent
// wrote it.
//
// It never sees the window: the views get a Host of callbacks, and the
// session they act on as a Session. The engine is called only off the UI
// goroutine, through Host.Work; widgets are touched only on the UI
// goroutine, and the package never starts a goroutine or calls fyne.Do
// itself.
package rewind

import (
	"context"
	"time"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/transcript"
)

// Host is what the views get from the window. Its functions are called
// on the UI goroutine.
type Host struct {
	// Window holds the dialogs.
	Window fyne.Window
	// Work runs work off the UI goroutine, then the function it returns
	// (if any) on the UI goroutine, in that order.
	Work func(work func() (apply func()))
	// Info and Error say msg in the window's banner.
	Info, Error func(msg string)
	// Current is the session shown, nil when none is.
	Current func() Session
}

// Session is an open session as the window keeps it. Its methods are
// called on the UI goroutine.
type Session interface {
	// Engine is the engine's session; nil while it is not open. The
	// views call it off the UI goroutine, except for what never waits.
	Engine() *agent.Session
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
	// Idle turns Send, Stop and the actions back as an idle session has
	// them, and clears the footer's run state unless it says how a run
	// ended.
	Idle()
	// Notice adds a line of the app's own to the chat.
	Notice(text string)
	// Rewound shows the session again after a rewind took superseded out
	// of the conversation, restoring files files (-1: the files were not
	// rewound), with text, the message rewound to, back in the prompt.
	Rewound(superseded []transcript.Message, files int, text string)
	// Merge is the Changes dialog's button that merges the session's
	// worktree into its repository; hidden when it has none.
	Merge() fyne.CanvasObject
}

// Row is a user message of the chat, which a rewind goes back to the
// start of.
type Row struct {
	Sent     time.Time // when the message was sent
	Sha      string    // the hash of its body
	LogIndex int       // its index in the current cycle's log, -1 outside it
}

// Views are the Rewind dialog and the Changes view.
type Views struct{ h Host }

// New returns the views.
func New(h Host) *Views { return &Views{h: h} }
