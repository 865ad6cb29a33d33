package ui

import (
	"context"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
	"github.com/tally-dev/tally/ui/rewind"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The window's maintenance jobs (compaction, purge, a new cycle, a
// rewind) are drawn by packages ui/compaction and ui/rewind; here is what
// they get of the window.

// maintenanceHost is what the compaction, purge, cycle and archive views
// get of the window.
func (u *UI) maintenanceHost() compaction.Host {
	return compaction.Host{
		Window: u.win, Work: u.bridge.Work, Price: u.price,
		Info: u.banner.ShowInfo, Error: u.banner.ShowError,
		Current: func() compaction.Session {
			if u.live == nil {
				return nil
			}
			return maintained{u, u.live}
		},
		Listed: func() { u.sessions.refresh() },
	}
}

// rewindHost is what the Rewind dialog and the Changes view get of the
// window.
func (u *UI) rewindHost() rewind.Host {
	return rewind.Host{
		Window: u.win, Work: u.bridge.Work, Info: u.banner.ShowInfo, Error: u.banner.ShowError,
		Current: func() rewind.Session {
			if u.live == nil {
				return nil
			}
			return maintained{u, u.live}
		},
	}
}

// startRewind is a user row's "Rewind to here…".
func (u *UI) startRewind(it *chat.Item) {
	u.rewinds.Rewind(rewind.Row{Sent: it.Sent, Sha: it.Sha, LogIndex: it.LogIndex})
}

// price returns the open session's model price.
func (u *UI) price() (ledger.Price, bool) {
	model := ""
	if u.live != nil {
		model = u.live.info.model
	}
	return u.settings.PriceFor(model)
}

// maintained is live as the compaction and rewind views see it.
type maintained struct {
	u    *UI
	live *liveSession
}

var (
	_ compaction.Session = maintained{}
	_ rewind.Session     = maintained{}
)

func (m maintained) Ops() compaction.Ops      { return m.live.ops }
func (m maintained) Engine() *agent.Session   { return m.live.sess }
func (m maintained) Merge() fyne.CanvasObject { return m.u.mergeButton(m.live) }
func (m maintained) Shown() bool              { return m.u.live == m.live }
func (m maintained) Running() bool            { return m.live.job.running }
func (m maintained) End() bool                { return m.u.endBusy(m.live) }
func (m maintained) Actions(busy bool)        { m.u.setBusyButtons(busy) }
func (m maintained) Idle()                    { m.u.setIdle() }
func (m maintained) Notice(text string)       { m.u.chat.Notice(text, false) }

func (m maintained) Begin(state string) (context.Context, bool) {
	return m.u.beginBusy(m.live, state)
}

func (m maintained) Hold(busy bool) {
	m.live.job.running = busy
	if busy {
		m.u.input.send.Disable()
		m.u.setBusyButtons(true)
	}
}

func (m maintained) Run(r tw.RunState) {
	m.u.footer.State.Run = r
	m.u.footer.Update()
}

func (m maintained) Level(tokens int, exact bool) {
	m.u.side.gauge.SetLevel(tokens, m.live.info.window, exact)
}

func (m maintained) Rewound(superseded []transcript.Message, files int, text string) {
	if len(superseded) > 0 {
		m.u.chat.NoteRewind(superseded[0], files)
	}
	m.u.reopen(m.live, text)
}

// reopen shows live again from the engine after its log was rewritten,
// with text in the prompt box.
func (u *UI) reopen(live *liveSession, text string) {
	live.draft = ""
	u.resetPanels()
	u.reload(live, func() {
		if u.live == live && text != "" {
			u.input.prompt.setDraft(text)
		}
	})
}
