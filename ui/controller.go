package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/workbench"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The session controller: opening a session through the front door,
// starting and stopping turns, and the run state the footer shows.

// liveSession is the open session and its running turn, if any.
type liveSession struct {
	id        string
	sess      *agent.Session
	ops       sessionOps // the session's compaction, purge and archive calls
	demo      bool
	model     string
	noModel   error // why turns cannot run (no endpoint configured)
	running   bool
	cancel    context.CancelFunc
	stopped   bool
	maxSteps  int
	window    int
	workspace string // the session's folder (it never changes)
	perm      permState
	draft     string             // the unsent prompt, as last stored
	rows      []ledger.Row       // the session's ledger rows as the engine committed them
	waiting   []*pendingApproval // approvals not answered yet, oldest first (sub-agents may ask together)
	ask       func()             // a compaction question asked while hidden, shown on return
	closeAsk  func()             // closes that question's dialog once shown
}

// permState is what the header shows of a session's permissions, read on
// the engine side when the session opens.
type permState struct {
	network   bool
	sandboxed bool
	sandbox   string // the sandbox note, e.g. "not sandboxed"
}

// agentConfig builds the engine configuration for a session through the
// front door, with the window's approver, compaction asker and event
// handler. It runs on the UI goroutine. When no model endpoint is set up
// the session still opens, and live.noModel says why turns cannot run.
func (u *UI) agentConfig(live *liveSession, isDemo bool) (agent.Config, error) {
	approver := &approver{bridge: u.bridge,
		show:     func(p *pendingApproval) { u.showApproval(live, p) },
		withdraw: func(p *pendingApproval) { u.withdrawApproval(live, p) }}
	asker := &compactionAsker{bridge: u.bridge, show: func(plan compact.Plan, answer func(bool)) func() {
		return u.askCompaction(live, plan, answer)
	}}
	cfg, err := u.wb.Config(workbench.SessionOptions{
		ID: live.id, Demo: isDemo, MaxSteps: agent.DefaultMaxSteps,
		Approver: approver, Asker: asker,
		OnEvent: u.bridge.Events(func(e agent.Event) { u.onEvent(live, e) }),
	})
	if errors.Is(err, workbench.ErrNoModel) {
		live.noModel = errNoModel
		if workbench.MissingKey(err) {
			live.noModel = errors.New(tw.UpperFirst(err.Error()) + ".")
		}
		err = nil
	}
	return cfg, err
}

// warmUpText is the footer part for a warm-up request's row.
func (u *UI) warmUpText(r ledger.Row) string {
	cost, _, ok := ledger.Cost([]ledger.Row{r}, u.settings.PriceFor)
	if !ok {
		return fmt.Sprintf("warm-up %s tokens (cost n/a)", tw.TokensShort(r.PromptTokens))
	}
	return fmt.Sprintf("warm-up %s tokens %s", tw.TokensShort(r.PromptTokens), tw.Dollars(cost))
}

// askCompaction shows the engine's compaction question ("ask" mode) in the
// preview dialog; it returns a function that closes the dialog unanswered.
func (u *UI) askCompaction(live *liveSession, plan compact.Plan, answer func(bool)) func() {
	if u.live != live {
		// Hidden: the question waits on the session until it is shown.
		live.ask = func() { live.closeAsk = u.askCompaction(live, plan, answer) }
		u.sessions.badges()
		u.notify("A compaction question waits", u.sessions.title(live.id)+" asks whether to compact its history.", live)
		return func() {
			live.ask = nil
			if live.closeAsk != nil {
				live.closeAsk()
			}
			u.sessions.badges()
		}
	}
	u.footer.State.Run = tw.RunState{Phase: tw.RunWaitingAnswer}
	u.footer.Update()
	_, closeFn := u.showCompactionDialog(plan, nil, func(ok bool) {
		if u.live == live && live.running {
			u.footer.State.Run = tw.Running(0, 0, "")
			if ok {
				u.footer.State.Run = tw.Busy("compacting…")
			}
			u.footer.Update()
		}
		answer(ok)
	})
	return closeFn
}

// setBusyButtons enables the session actions when a session is open and
// idle (busy false).
func (u *UI) setBusyButtons(busy bool) {
	open := u.live != nil && u.live.ops != nil
	ok := !busy && open
	for _, b := range []*widget.Button{u.compactB, u.purgeB, u.cycleB} {
		enableIf(b, ok)
	}
	enableIf(u.archiveB, open)
	enableIf(u.changesB, open)
	// Fyne has no tooltips: a line under the buttons says why they are off.
	switch {
	case !open:
		u.actionsWhy.SetText("Open a session to compact, purge, start a cycle or browse its archive.")
		u.actionsWhy.Show()
	case busy:
		u.actionsWhy.SetText("A turn is running: Compact, Purge and New cycle wait until it ends (or press Stop).")
		u.actionsWhy.Show()
	default:
		u.actionsWhy.Hide()
	}
	u.setSuggestions(ok)
}

// enableIf enables b when on, and disables it otherwise.
func enableIf(b *widget.Button, on bool) {
	if on {
		b.Enable()
	} else {
		b.Disable()
	}
}

// saveSettings stores s off the UI goroutine.
func (u *UI) saveSettings(s workbench.Settings) {
	wb := u.wb
	u.saving.Add(1)
	u.try("save the settings", func() error {
		defer u.saving.Done()
		return wb.SaveSettings(s)
	})
}

// send starts a turn with the prompt's text.
func (u *UI) send() {
	live := u.live
	text := strings.TrimSpace(u.prompt.Text)
	if live == nil || live.sess == nil || live.running || text == "" {
		return
	}
	if live.noModel != nil {
		u.banner.ShowAction(live.noModel.Error(), "Settings", u.settingsFor(live.noModel))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	live.running, live.cancel, live.stopped = true, cancel, false
	u.prompt.SetText("")
	u.keepDraft(live)
	u.sessions.badges()
	u.setRunning(1)
	u.banner.Hide()
	sess := live.sess
	u.setBusyButtons(true)
	u.bridge.Work(func() func() {
		res, err := sess.Run(ctx, text)
		level, exact := sess.ContextTokens()
		alerts := sess.Alerts()
		return func() {
			if u.live == live {
				u.footer.State.Alerts = alerts
			}
			u.turnDone(live, res, err, level, exact)
		}
	})
}

// stop cancels the running turn; the engine keeps the transcript valid.
func (u *UI) stop() {
	if u.live != nil && u.live.running && u.live.cancel != nil {
		u.live.stopped = true
		u.live.cancel()
		u.footer.State.Run = tw.RunState{Phase: tw.RunStopping}
		u.footer.Update()
	}
}

func (u *UI) turnDone(live *liveSession, res agent.Result, err error, level int, exact bool) {
	live.running = false
	live.cancel = nil
	live.waiting, live.ask = nil, nil
	if u.live != live {
		if res.Reason != agent.ReasonCancelled {
			u.backgroundDone(live, err)
		} else {
			delete(u.bg, live.id)
			u.closeSession(live.sess)
		}
		return
	}
	if res.Reason != agent.ReasonCancelled {
		what := "The turn finished."
		if err != nil {
			what = "The turn failed."
		}
		u.notify(what, u.sessions.title(live.id), live)
	}
	u.chat.dropStreaming()
	u.footer.ClearRetry()
	switch {
	case res.Reason == agent.ReasonCancelled:
		u.footer.State.Run = tw.RunState{Phase: tw.RunStopped}
		u.chat.notice("Stopped. The conversation is saved; send a message to continue.", false)
	case err != nil:
		u.footer.State.Run = tw.RunState{Phase: tw.RunFailed}
		u.banner.ShowError(friendlyError(err))
	default:
		u.footer.State.Run = tw.RunState{}
	}
	u.gauge.SetLevel(level, live.window, exact)
	u.setIdleButtons()
	u.footer.Update()
	u.sessions.refresh()
}

// friendlyError phrases an engine error for the banner.
func friendlyError(err error) string {
	switch workbench.Classify(err) {
	case workbench.ProblemUnreachable:
		return "Cannot reach the model server: " + err.Error()
	case workbench.ProblemUnauthorized:
		return "The model server rejected the API key; open Settings (the gear) and check the key."
	case workbench.ProblemUnknownModel:
		return "The model server does not know this model; open Settings (the gear) and check the model name."
	}
	return "The turn failed: " + err.Error()
}

func (u *UI) setRunning(step int) {
	u.sendB.Disable()
	u.stopB.Enable()
	u.footer.State.Run = tw.Running(step, u.live.maxSteps, "")
	u.footer.Update()
}

func (u *UI) setIdleButtons() {
	u.stopB.Disable()
	if u.live != nil && u.live.sess != nil {
		u.sendB.Enable()
	} else {
		u.sendB.Disable()
	}
	u.setBusyButtons(u.live != nil && u.live.running)
}

func (u *UI) setIdle() {
	u.setIdleButtons()
	if u.live == nil || !u.live.running {
		if !u.footer.State.Run.Ended() {
			u.footer.State.Run = tw.RunState{}
		}
	}
	u.footer.Update()
}

// showTitle puts the open session's title and workspace in the header and
// the window title.
func (u *UI) showTitle(title, workspace string) {
	u.title.SetText(title + "  ·  " + workspace)
	u.win.SetTitle("Tally — " + title)
}

// showTotals puts live's cost so far in the footer and the session's hit
// ratio in the chip, both from ledger.Sum over live's rows (priced by
// ledger.Cost, as the chart and the command line price them). The cost
// shows "n/a" while the session's model has no price — also before its
// first request, never as $0.00.
func (u *UI) showTotals(live *liveSession) {
	t := ledger.Sum(live.rows, u.settings.PriceFor)
	_, priced := u.settings.PriceFor(live.model)
	u.footer.State.Cost, u.footer.State.CostKnown = t.Cost, t.Priced && priced
	u.chip.SetSession(t)
}

// try runs do off the UI goroutine; an error it returns goes to the
// banner as "Could not <what>: …".
func (u *UI) try(what string, do func() error) {
	u.bridge.Work(func() func() {
		err := do()
		if err == nil {
			return nil
		}
		return func() { u.banner.ShowError("Could not " + what + ": " + err.Error()) }
	})
}

// readThen runs read off the UI goroutine for the shown session live and
// hands its result to show on the UI goroutine, unless another session was
// opened meanwhile; an error goes to the banner as "Could not <what>: …".
func readThen[T any](u *UI, live *liveSession, what string, read func() (T, error), show func(T)) {
	u.bridge.Work(func() func() {
		v, err := read()
		return func() {
			if u.live != live {
				return
			}
			if err != nil {
				u.banner.ShowError("Could not " + what + ": " + err.Error())
				return
			}
			show(v)
		}
	})
}
