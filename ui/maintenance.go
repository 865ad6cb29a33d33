package ui

import (
	"context"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/ui/compaction"
	tw "github.com/tally-dev/tally/ui/widget"
)

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

// price returns the open session's model price.
func (u *UI) price() (ledger.Price, bool) {
	model := ""
	if u.live != nil {
		model = u.live.info.model
	}
	return u.settings.PriceFor(model)
}

// maintained is live as the compaction views see it.
type maintained struct {
	u    *UI
	live *liveSession
}

var _ compaction.Session = maintained{}

func (m maintained) Ops() compaction.Ops { return m.live.ops }
func (m maintained) Shown() bool         { return m.u.live == m.live }
func (m maintained) Running() bool       { return m.live.job.running }
func (m maintained) End() bool           { return m.u.endBusy(m.live) }
func (m maintained) Actions(busy bool)   { m.u.setBusyButtons(busy) }
func (m maintained) Idle()               { m.u.setIdle() }
func (m maintained) Notice(text string)  { m.u.chat.Notice(text, false) }

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
