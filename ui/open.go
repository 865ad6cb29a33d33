package ui

import (
	"context"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/compaction"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Opening a session: the engine is read on a work goroutine into a
// sessionState, a plain value, and the UI goroutine draws that value. No
// widget waits on the engine, and the work never touches the UI's state.

// sessionState is everything the panels show of an open session, as read
// from the engine.
type sessionState struct {
	meta     workbench.SessionInfo
	msgs     []transcript.Message
	past     []agent.PastRebuild
	cycles   []cycle.Archive
	children []subagent.Info
	alerts   []string
	// perm is the permission state; nil when the session was read while
	// a turn runs, whose shown state stands.
	perm      *permState
	level     int
	exact     bool
	window    int
	compactAt int
	cycleAt   int
	rows      []ledger.Row
	rule      ledger.CacheRule
	items     []todo.Item
	draft     string
	draftOK   bool   // draft was read (a failed read keeps the prompt box as it is)
	cutShort  string // the note of a turn the closing app interrupted
	effort    string // the session's reasoning effort (workbench.EffortLine)
	roots     []string
}

// readSession reads what the panels show of session id from sess, off the
// UI goroutine. Everything is read from the session's last commit; the
// permission switches only when no turn runs (running).
func readSession(wb *workbench.Workbench, sess *agent.Session, id string, running bool) sessionState {
	var s sessionState
	v := sess.Snapshot() // one view: what the last commit left, never waiting for a turn
	s.msgs, s.meta, s.alerts, s.roots = v.Messages(), v.Meta, v.Alerts, sess.Files().Roots()
	if !running {
		s.perm = &permState{network: sess.Permissions().AllowNetwork(), sandboxed: sess.Permissions().Sandboxed(), sandbox: sess.Permissions().SandboxNote()}
	}
	s.past, _ = sess.Compaction().History()
	s.cycles, _ = wb.Archives(id)
	s.level, s.exact = v.Level, v.Exact
	s.compactAt, s.cycleAt = v.CompactAt, v.CycleAt
	s.window = v.Window
	s.rows, _ = sess.Audit().Ledger()
	s.rule = v.CacheRule
	s.items = v.Checklist
	s.children, _ = sess.Subagents().List()
	draft, err := wb.Draft(id)
	s.draft, s.draftOK = draft, err == nil
	s.cutShort, _ = wb.Interrupted(id)
	s.effort = workbench.EffortLine(wb.Efforts(id))
	return s
}

// openSession opens a stored session off the UI goroutine and shows it.
func (u *UI) openSession(id string) {
	if u.live != nil && u.live.id == id {
		return
	}
	u.leave()
	u.resetPanels()
	u.showChat()
	u.head.title.SetText("Opening…")
	if live := u.bg[id]; live != nil {
		// A turn of it runs in the background: show it again, rebuilt from
		// the engine, with whatever it asked meanwhile.
		delete(u.bg, id)
		u.live = live
		u.reload(live, nil)
		return
	}
	live := &liveSession{id: id}
	u.live = live
	wb := u.wb
	u.bridge.Work(func() func() {
		meta, err := wb.Session(id)
		return func() {
			if err == nil && u.live == live {
				err = u.openConfigured(live, workbench.IsDemo(meta))
			}
			if err != nil {
				u.openFailed(live, err)
			}
		}
	})
}

// openConfigured configures live (on the UI goroutine: the configuration
// holds the window's approver and event sink) and opens it off the UI
// goroutine.
func (u *UI) openConfigured(live *liveSession, isDemo bool) error {
	cfg, err := u.agentConfig(live, isDemo)
	if err != nil {
		return err
	}
	live.info.demo, live.info.model = isDemo, cfg.ModelName
	wb, id := u.wb, live.id
	u.bridge.Work(func() func() {
		sess, err := wb.OpenSession(cfg, id)
		if err != nil {
			return func() { u.openFailed(live, err) }
		}
		s := readSession(wb, sess, id, false)
		return func() { u.showSession(live, sess, s) }
	})
	return nil
}

// reload reads live's session again off the UI goroutine and shows it,
// then runs then (if any). What the work needs of live is read here, on
// the UI goroutine.
func (u *UI) reload(live *liveSession, then func()) {
	wb, sess, id, running := u.wb, live.sess, live.id, live.job.running
	u.bridge.Work(func() func() {
		s := readSession(wb, sess, id, running)
		return func() {
			u.showSession(live, sess, s)
			if then != nil {
				then()
			}
		}
	})
}

// openFailed says why live could not be opened, unless another session
// was opened meanwhile.
func (u *UI) openFailed(live *liveSession, err error) {
	if u.live != live {
		return
	}
	u.live = nil
	u.showWelcome()
	u.banner.ShowError("Could not open the session: " + err.Error())
}

// showSession draws s, read from sess, as the shown session live. If
// another session was opened meanwhile, a session opened for live alone
// is closed again.
func (u *UI) showSession(live *liveSession, sess *agent.Session, s sessionState) {
	if u.live != live {
		if live.sess != sess {
			u.closeSession(sess)
		}
		return
	}
	live.sess, live.ops, live.info.window, live.info.workspace = sess, compaction.EngineOps{Session: sess}, s.window, s.meta.Workspace
	live.empty = len(s.msgs) == 0 && len(s.cycles) == 0 && !live.job.running
	if s.perm != nil {
		live.info.perm = *s.perm
	}
	u.head.perm.load(live)
	live.info.roots = s.roots
	u.showTitle(s.meta.Title, live.info)
	tw.ShowIf(u.head.demoTag, live.info.demo)
	tw.ShowIf(u.input.suggestBox, live.info.demo)
	u.chat.SetHistory(s.cycles, s.past, s.msgs)
	u.chat.NoteRequests(s.rows)
	u.chat.AttachChildren(s.children)
	if len(s.msgs) >= bigSession {
		u.bridge.Work(releaseMemory)
	}
	defer u.revealPending()
	u.side.gauge.SetLevel(s.level, s.window, s.exact)
	u.setThresholds(live, s.compactAt, s.cycleAt)
	live.effort = s.effort
	u.applyLedger(live, s.rows, s.rule)
	u.side.checklist.SetItems(s.items)
	u.footer.State.Alerts = s.alerts
	u.sessions.selectID(live.id)
	if live.info.noModel != nil {
		u.banner.ShowAction(live.info.noModel.Error(), "Settings", u.settingsFor(live.info.noModel))
	} else {
		u.banner.Hide()
		// Read now, not with the rest: a server's change that came while
		// the session was read was dropped, as no session was shown yet.
		u.showMCP(live, sess.MCP().Status(), "")
		u.showHookTrust(live, false)
		u.showInterrupted(live, s.cutShort)
		u.showSkillsTrust(live)
	}
	u.setIdle()
	if s.draftOK {
		live.draft = s.draft
		u.input.prompt.setDraft(s.draft)
	}
	if live.job.running {
		u.setRunning(0)
		u.setBusyButtons(true)
		u.resumeWaiting(live)
	}
	if u.next.warmUp == live.id {
		u.next.warmUp = ""
		if u.settings.WarmUp && !live.info.demo && live.info.noModel == nil {
			u.warmUp(live)
		}
	}
	if u.settings.LastSession != live.id {
		u.settings.LastSession = live.id
		u.saveSettings(u.settings)
	}
	u.input.prompt.FocusIn()
	if u.next.autoSend != "" && live.info.noModel == nil && !live.job.running {
		u.input.prompt.SetText(u.next.autoSend)
		u.next.autoSend = ""
		u.send()
	}
}

// bigSession is the number of messages from which opening a session is
// followed by handing the memory its reading took back to the system.
const bigSession = 2000

// applyLedger shows a session's stored usage rows: the chart draws them,
// the chip shows the last request and the footer its duration and the
// session's cost.
func (u *UI) applyLedger(live *liveSession, rows []ledger.Row, rule ledger.CacheRule) {
	live.rows = rows
	u.footer.State.Model, u.footer.State.Effort = live.info.model, live.effort
	u.footer.State.LastDuration, u.footer.State.Fallback = 0, ""
	u.footer.State.RetryAt = time.Time{}
	u.side.chip.Reset()
	u.side.chip.SetRule(rule)
	if last, ok := lastTurnRow(rows); ok {
		// The chip shows what it showed live: the last turn request's
		// cache (summaries, briefs and sub-agents never set it), cold
		// only for a session's very first request.
		u.footer.State.LastDuration = rowDuration(last)
		u.footer.State.Fallback = fellBack(last, live.info.model)
		u.side.chip.Set(last, last.Request == 1)
	}
	u.side.chart.SetPrices(u.settings.PriceFor)
	u.side.chart.SetRows(rows, live.info.window)
	u.showTotals(live)
	u.footer.Update()
}

// lastTurnRow is the last row of a turn's request in rows.
func lastTurnRow(rows []ledger.Row) (ledger.Row, bool) {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Kind == ledger.KindTurn {
			return rows[i], true
		}
	}
	return ledger.Row{}, false
}

// refreshLedger reads live's ledger again once a job has ended, so the
// counts and the cost include the requests that sent no usage event (a
// summary, a hand-off brief, sub-agents): live shows what reopening
// shows.
func (u *UI) refreshLedger(live *liveSession) {
	sess := live.sess
	if sess == nil {
		return
	}
	readThen(u, live, "read the session's ledger", sess.Audit().Ledger, func(rows []ledger.Row) {
		live.rows = rows
		u.side.chart.SetRows(rows, live.info.window)
		u.showTotals(live)
		u.footer.Update()
	})
}

// warmUp sends the new session's stable prefix once, off the UI goroutine,
// so its first real request is billed at the cache-hit price. The cost
// arrives as a usage event and is shown in the footer.
func (u *UI) warmUp(live *liveSession) {
	sess := live.sess
	u.footer.State.WarmUp = "warming the cache…"
	u.footer.Update()
	u.bridge.Work(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := sess.WarmUp(ctx); err == nil {
			return nil
		}
		return func() {
			if u.live == live {
				u.footer.State.WarmUp = "warm-up failed"
				u.footer.Update()
			}
		}
	})
}

// setThresholds marks where compaction and a new cycle trigger on the
// gauge, and says under it why compaction triggers there when that is
// under the window's own threshold (the price-aware level, or the level
// the user chose).
func (u *UI) setThresholds(live *liveSession, compactAt, cycleAt int) {
	u.side.gauge.SetThresholds(compactAt, cycleAt)
	why := ""
	if live != nil && live.sess != nil {
		why = live.sess.Compaction().KeepReason()
	}
	if why != "" {
		why = "Compaction " + why + "."
	}
	u.side.keepWhy.SetText(why)
	tw.ShowIf(u.side.keepWhy, why != "")
}
