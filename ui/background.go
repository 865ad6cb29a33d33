package ui

import (
	"context"
	"fmt"
	"time"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

// draftDelay is how long after the last keystroke a draft is stored.
const draftDelay = 700 * time.Millisecond

// Sessions in the background: a turn keeps running when the user opens
// another session. Its events still reach the engine's log; the panels
// ignore them until the session is shown again, when they are rebuilt from
// the engine. An approval or a compaction question it asks meanwhile waits
// on the session (a badge in the list says so) and appears when it is
// reopened. Drafts: each session keeps its own unsent prompt, stored
// through the front door so it also survives a restart.

// The badges the session list shows next to a session's title: none, a
// turn runs, or it waits for the user (an approval, a compaction question
// or a form).
const badgeNone, badgeRunning, badgeWaiting = "", "running", "needs you"

// running returns the live state of session id if a turn of it runs,
// whether shown or in the background.
func (u *UI) running(id string) *liveSession {
	if u.live != nil && u.live.id == id && u.live.job.running {
		return u.live
	}
	return u.bg[id]
}

// badgeOf is session id's badge in the list.
func (u *UI) badgeOf(id string) string {
	switch {
	case u.running(id) == nil:
		return badgeNone
	case u.waitingFor(id) != "":
		return badgeWaiting
	}
	return badgeRunning
}

// waitingFor says what session id's running turn waits for the user on,
// "" for nothing.
func (u *UI) waitingFor(id string) string {
	switch live := u.running(id); {
	case live == nil:
	case len(live.waits.approvals) > 0:
		return "needs approval"
	case live.waits.ask != nil || len(live.waits.forms) > 0:
		return "needs an answer"
	}
	return ""
}

// leave puts the shown session aside before another opens: its draft is
// kept, and a running turn goes on in the background.
func (u *UI) leave() {
	live := u.live
	if live == nil {
		return
	}
	u.keepDraft(live)
	if live.job.running {
		u.bg[live.id] = live
	} else {
		u.memory.Leave(live.sess, u.closeSession) // memory may be proposed first
	}
	u.live = nil
}

// closeSession releases what an open session holds (its MCP servers, its
// file recording) off the UI goroutine; opening it again starts afresh.
// A nil session is nothing to close.
func (u *UI) closeSession(sess *agent.Session) {
	if sess != nil {
		u.bridge.Work(func() func() { _ = sess.Close(); return nil })
	}
}

// keepDraft stores the prompt box's text as live's draft.
func (u *UI) keepDraft(live *liveSession) {
	if live == nil || live.sess == nil {
		return
	}
	text := u.input.prompt.Text
	if text == live.draft {
		return
	}
	live.draft = text
	wb, id := u.wb, live.id
	u.try("keep the unsent prompt", func() error { return wb.SaveDraft(id, text) })
}

// draftChanged stores the shown session's draft a moment after typing
// stops, so a crash or a closed window loses at most that moment.
func (u *UI) draftChanged() {
	live := u.live
	if live == nil || live.sess == nil {
		return
	}
	u.input.draftGen++
	gen := u.input.draftGen
	u.bridge.After(draftDelay, func() {
		if u.live == live && u.input.draftGen == gen {
			u.keepDraft(live)
		}
	})
}

// resumeWaiting shows what a background turn asked while hidden.
func (u *UI) resumeWaiting(live *liveSession) {
	for _, p := range append([]*chat.Approval(nil), live.waits.approvals...) {
		u.showApproval(live, p)
	}
	if ask := live.waits.ask; ask != nil {
		live.waits.ask = nil
		ask()
	}
	u.showWaitingForms(live)
}

// backgroundDone is a hidden session's turn ending.
func (u *UI) backgroundDone(live *liveSession, failed error) {
	delete(u.bg, live.id)
	u.closeSession(live.sess)
	u.sessions.badges()
	what := "finished"
	if failed != nil {
		what = "failed: " + failed.Error()
	}
	u.notify("Turn "+what, fmt.Sprintf("%s — open it in Tally to read the answer.", u.sessions.title(live.id)), live)
}

// notify sends a desktop notification unless the user turned them off or
// is looking at that session in the focused window.
func (u *UI) notify(title, body string, live *liveSession) {
	if u.settings.NoNotifications || (u.focused && u.live == live) {
		return
	}
	u.app.SendNotification(fyne.NewNotification("Tally: "+title, body))
}

// endBusy marks live's maintenance job (compaction, purge, new cycle)
// over; it reports whether live is the shown session, and otherwise takes
// it out of the background.
func (u *UI) endBusy(live *liveSession) bool {
	cycled := live.job.cycled
	live.job = job{}
	if cycled && u.live == live {
		defer u.reload(live, nil)
	} else if u.live == live {
		defer u.refreshLedger(live)
	}
	if u.live != live {
		delete(u.bg, live.id)
		u.closeSession(live.sess)
		u.sessions.badges()
		return false
	}
	return true
}

// beginBusy marks live as running a maintenance job (compaction, purge, a
// new cycle) that Stop can cancel: it disables Send and the other actions
// and shows state in the footer. It reports false when live is not the open
// session or is already busy.
func (u *UI) beginBusy(live *liveSession, state string) (context.Context, bool) {
	if u.live != live || live == nil || live.job.running {
		return nil, false
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	live.job = job{running: true, cancel: cancel}
	u.input.send.Disable()
	u.input.stop.Enable()
	u.setBusyButtons(true)
	u.footer.State.Run = tw.Busy(state)
	u.footer.Update()
	return ctx, true
}
