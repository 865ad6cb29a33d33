package ui

import (
	"fmt"

	"fyne.io/fyne/v2/dialog"

	"github.com/tally-dev/tally/internal/text"
)

// Closing the window while a turn runs: the window asks first, and a
// session whose turn was cut short says so when it is opened again.

// runningTurns lists the sessions, shown or in the background, whose turn
// or maintenance job runs.
func (u *UI) runningTurns() []*liveSession {
	var out []*liveSession
	for _, live := range append([]*liveSession{u.live}, bgList(u.bg)...) {
		if live != nil && live.job.running {
			out = append(out, live)
		}
	}
	return out
}

// confirmClose runs closeWindow at once when no turn runs; otherwise it
// asks whether to stop the running turns and close, or keep working.
func (u *UI) confirmClose(closeWindow func()) {
	running := u.runningTurns()
	if len(running) == 0 {
		closeWindow()
		return
	}
	msg := fmt.Sprintf("A turn is running in %q. Closing Tally stops it; the conversation is saved and you can continue it later.",
		u.sessions.title(running[0].id))
	if n := len(running); n > 1 {
		msg = text.Plural(n, "session") + " are running a turn. Closing Tally stops them; the conversations are saved and you can continue them later."
	}
	for _, live := range running {
		if len(live.waits.approvals) > 0 {
			msg += " A call waiting for your approval will be cancelled without running."
			break
		}
	}
	d := dialog.NewConfirm("Stop the turn and close?", msg, func(ok bool) {
		if ok {
			closeWindow()
		}
	}, u.win)
	d.SetConfirmText("Stop the turn and close")
	d.SetDismissText("Keep working")
	d.Show()
}

// interruptedNote is what reopening live says of a turn the closing
// window cut short.
func interruptedNote(live *liveSession) string {
	if a := live.waits.approvals; len(a) > 0 {
		what := a[0].Req.Summary
		if what == "" {
			what = a[0].Req.Tool
		}
		return "The last turn was interrupted when Tally closed while " + text.OneLine(what, 80) +
			" waited for your approval; that call did not run and is marked cancelled. Send a message to continue."
	}
	return "The last turn was interrupted when Tally closed; send a message to continue."
}

// showInterrupted shows, once, the note of a turn cut short by closing
// the app (see interruptedNote), and forgets it.
func (u *UI) showInterrupted(live *liveSession, note string) {
	if note == "" {
		return
	}
	u.banner.ShowInfo(note)
	wb, id := u.wb, live.id
	// Closing waits for this write (u.saving), so the note is said once
	// even when the window closes right after it.
	u.saving.Add(1)
	u.try("forget the interrupted turn", func() error {
		defer u.saving.Done()
		return wb.SetInterrupted(id, "")
	})
}
