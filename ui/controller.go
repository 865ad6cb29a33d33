package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The session controller: opening a session through the front door,
// starting and stopping turns, and the run state the footer shows.

// liveSession is an open session, shown or running in the background.
type liveSession struct {
	id    string
	sess  *agent.Session
	ops   compaction.Ops // the session's compaction, purge and archive calls
	info  sessionFacts   // what opening it established
	job   job            // the turn or maintenance job running, if any
	waits waits          // what it waits for the user on
	draft string         // the unsent prompt, as last stored
	empty bool           // the session has no message yet: nothing to compact, purge or archive
	rows  []ledger.Row
	// effort is the footer's effort part (workbench.EffortLine).
	effort string
	// lspTold are the language servers whose failure the banner told.
	lspTold map[string]bool
}

// sessionFacts is what opening a session established: how it is
// configured and what the engine said of it.
type sessionFacts struct {
	demo      bool
	model     string
	noModel   error // why turns cannot run (no endpoint configured)
	window    int
	workspace string   // the session's folder (it never changes)
	roots     []string // its further folders (fixed while it is open)
	perm      permState
}

// job is a session's running turn or maintenance job (compaction, purge,
// new cycle, rewind), which Stop cancels.
type job struct {
	running bool
	cancel  context.CancelCauseFunc // nil: Stop; step.ErrClosing: the window closes
	// cycled: a new cycle began during the job. When it ends the chat is
	// read again from the engine, so it shows what reopening the session
	// shows: the closed cycle folded under its row.
	cycled bool
}

// waits is what a session waits for the user on; a hidden session's
// questions are shown when it is shown again.
type waits struct {
	approvals []*chat.Approval // approvals not answered yet, oldest first (sub-agents may ask together)
	forms     []*pendingForm   // MCP servers' forms not answered yet, oldest first (see elicit.go)
	ask       func()           // a compaction question asked while hidden, shown on return
	closeAsk  func()           // closes that question's dialog once shown
}

// maxSteps is the per-turn step limit of the window's sessions.
const maxSteps = agent.DefaultMaxSteps

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
// the session still opens, and live.info.noModel says why turns cannot run.
func (u *UI) agentConfig(live *liveSession, isDemo bool) (agent.Config, error) {
	approver := &chat.Approver{Do: u.bridge.Do,
		Show:     func(p *chat.Approval) { u.showApproval(live, p) },
		Withdraw: func(p *chat.Approval) { u.withdrawApproval(live, p) }}
	asker := &compaction.Asker{Do: u.bridge.Do, Show: func(plan compact.Plan, answer func(bool)) func() {
		return u.askCompaction(live, plan, answer)
	}}
	cfg, err := u.wb.Config(workbench.SessionOptions{
		ID: live.id, Demo: isDemo, MaxSteps: maxSteps,
		Approver: approver, Asker: asker, Forms: true, PrepareSnapshots: true,
		OnEvent: u.bridge.Events(func(e agent.Event) { u.onEvent(live, e) }),
	})
	if errors.Is(err, workbench.ErrNoModel) {
		live.info.noModel = errNoModel
		if workbench.MissingKey(err) {
			live.info.noModel = errors.New(tw.UpperFirst(err.Error()) + ".")
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
		live.waits.ask = func() { live.waits.closeAsk = u.askCompaction(live, plan, answer) }
		u.sessions.badges()
		u.notify("A compaction question waits", u.sessions.title(live.id)+" asks whether to compact its history.", live)
		return func() {
			live.waits.ask = nil
			if live.waits.closeAsk != nil {
				live.waits.closeAsk()
			}
			u.sessions.badges()
		}
	}
	u.footer.State.Run = tw.RunState{Phase: tw.RunWaitingAnswer}
	u.footer.Update()
	_, closeFn := u.maint.ShowPreview(plan, nil, func(ok bool) {
		if u.live == live && live.job.running {
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
	empty := open && u.live.empty
	for _, b := range []*widget.Button{u.actions.compact, u.actions.purge, u.actions.cycle} {
		enableIf(b, ok && !empty)
	}
	enableIf(u.actions.archive, open)
	enableIf(u.actions.changes, open)
	// Fyne has no tooltips: a line under the buttons says why they are off.
	switch {
	case !open:
		u.actions.why.SetText("Open a session to compact, purge, start a cycle or browse its archive.")
		u.actions.why.Show()
	case busy:
		u.actions.why.SetText("A turn is running: Compact, Purge and New cycle wait until it ends (or press Stop).")
		u.actions.why.Show()
	case empty:
		u.actions.why.SetText("Nothing to compact, purge or archive yet: the session has no messages.")
		u.actions.why.Show()
	default:
		u.actions.why.Hide()
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
	text := strings.TrimSpace(u.input.prompt.Text)
	imgs := u.input.images.items
	if live == nil || live.sess == nil || live.job.running || (text == "" && len(imgs) == 0) {
		return
	}
	if inv, ok, err := command.ParseAction(text); ok && len(imgs) == 0 {
		u.runCommand(live, inv, err) // a built-in command: an action, not a message
		return
	}
	if live.info.noModel != nil {
		u.banner.ShowAction(live.info.noModel.Error(), "Settings", u.settingsFor(live.info.noModel))
		return
	}
	if err := live.sess.Images().Check(u.input.images.inputs()); err != nil {
		u.showImageError(err) // nothing sent: the text and the pictures stay
		return
	}
	inputs := u.input.images.inputs()
	u.input.prompt.SetText("")
	u.input.images.clear()
	u.keepDraft(live)
	u.startTurn(live, text, inputs, imgs)
}

// startTurn runs a turn of live, shown or in the background (a prompt
// queued in the fleet), with text and the pictures inputs (imgs as the
// tray held them).
func (u *UI) startTurn(live *liveSession, text string, inputs []images.Input, imgs []pendingImage) {
	ctx, cancel := context.WithCancelCause(context.Background())
	live.job, live.empty = job{running: true, cancel: cancel}, false
	if u.live == live {
		u.setRunning(1)
		u.banner.Hide()
		u.setBusyButtons(true)
	} else {
		u.bg[live.id] = live
	}
	u.sessions.badges()
	sess := live.sess
	u.bridge.Work(func() func() {
		res, err := sess.RunWithImages(ctx, text, inputs)
		v := sess.Snapshot()
		level, exact := v.Level, v.Exact
		alerts := sess.Snapshot().Alerts
		return func() {
			if u.live == live {
				u.footer.State.Alerts = alerts
			}
			var cmdErr *command.Error
			var imgErr *images.Error
			if (errors.As(err, &cmdErr) || errors.As(err, &imgErr)) && u.live == live && u.input.prompt.Text == "" {
				u.input.prompt.setDraft(text) // nothing was sent: correct it and send again
				if len(u.input.images.items) == 0 {
					u.input.images.set(imgs)
				}
			}
			u.turnDone(live, res, err, level, exact)
		}
	})
}

// stop cancels the running turn; the engine keeps the transcript valid.
func (u *UI) stop() {
	if u.live != nil && u.live.job.running && u.live.job.cancel != nil {
		u.live.job.cancel(nil)
		u.footer.State.Run = tw.RunState{Phase: tw.RunStopping}
		u.footer.Update()
	}
}

func (u *UI) turnDone(live *liveSession, res agent.Result, err error, level int, exact bool) {
	queued, again := u.fleet.Ended(live.id, live.sess, res.Reason, err)
	cycled := live.job.cycled
	live.job = job{}
	if cycled && u.live == live {
		defer u.reload(live, nil)
	} else if u.live == live {
		defer u.refreshLedger(live)
	}
	live.waits.approvals, live.waits.ask = nil, nil
	if u.live != live {
		if again {
			u.startTurn(live, queued, nil, nil) // the fleet's queued prompt, in the background
			return
		}
		if res.Reason != step.ReasonCancelled {
			u.backgroundDone(live, err)
		} else {
			delete(u.bg, live.id)
			u.closeSession(live.sess)
		}
		return
	}
	if res.Reason != step.ReasonCancelled {
		what := "The turn finished."
		if err != nil {
			what = "The turn failed."
		}
		u.notify(what, u.sessions.title(live.id), live)
	}
	u.chat.EndStreaming(res.Reason == step.ReasonCancelled) // a stopped answer stays
	u.footer.ClearRetry()
	switch {
	case res.Reason == step.ReasonCancelled:
		u.footer.State.Run = tw.RunState{Phase: tw.RunStopped}
		u.chat.Notice("Stopped. The conversation is saved; send a message to continue.", false)
	case err != nil:
		u.footer.State.Run = tw.RunState{Phase: tw.RunFailed}
		u.showTurnError(err)
	default:
		u.footer.State.Run = tw.RunState{}
	}
	u.side.gauge.SetLevel(level, live.info.window, exact)
	u.setIdleButtons()
	u.footer.Update()
	u.sessions.refresh()
	if again {
		u.startTurn(live, queued, nil, nil)
	}
}

// showTurnError puts a failed turn's error in the banner, with a Settings
// button, on the field to fix, when the settings can fix it.
func (u *UI) showTurnError(err error) {
	msg := friendlyError(err)
	focus := func(fld settings.Field) func() {
		return func() {
			if f := u.openSettings(); f != nil {
				f.Focus(fld)
			}
		}
	}
	switch workbench.Classify(err) {
	case workbench.ProblemUnauthorized:
		u.banner.ShowAction(msg, "Settings", focus(settings.APIKey))
	case workbench.ProblemUnknownModel:
		u.banner.ShowAction(msg, "Settings", focus(settings.Model))
	case workbench.ProblemUnreachable:
		u.banner.ShowAction(msg, "Settings", focus(settings.BaseURL))
	default:
		u.banner.ShowError(msg)
	}
}

// friendlyError phrases an engine error for the banner.
func friendlyError(err error) string {
	var cmdErr *command.Error
	if errors.As(err, &cmdErr) {
		return "Not sent: " + err.Error() + "."
	}
	switch workbench.Classify(err) {
	case workbench.ProblemUnreachable:
		return "Cannot reach the model server: " + err.Error()
	case workbench.ProblemUnauthorized:
		return "The model server rejected the API key (401); check the key in Settings."
	case workbench.ProblemUnknownModel:
		return "The model server does not know this model; check the model name in Settings."
	}
	return "The turn failed: " + err.Error()
}

func (u *UI) setRunning(step int) {
	u.input.send.Disable()
	u.input.stop.Enable()
	u.footer.State.Run = tw.Running(step, maxSteps, "")
	u.footer.Update()
}

func (u *UI) setIdleButtons() {
	u.input.stop.Disable()
	if u.live != nil && u.live.sess != nil {
		u.input.send.Enable()
	} else {
		u.input.send.Disable()
	}
	u.setBusyButtons(u.live != nil && u.live.job.running)
}

func (u *UI) setIdle() {
	u.setIdleButtons()
	if u.live == nil || !u.live.job.running {
		if !u.footer.State.Run.Ended() {
			u.footer.State.Run = tw.RunState{}
		}
	}
	u.footer.Update()
}

// showTitle puts the open session's title and workspace in the header and
// the window title.
func (u *UI) showTitle(title string, f sessionFacts) {
	u.head.title.SetText(title + "  ·  " + strings.Join(append([]string{f.workspace}, f.roots...), " + "))
	u.win.SetTitle("Tally — " + title)
}

// showTotals puts live's cost so far in the footer and the session's hit
// ratio in the chip, both from ledger.Sum over live's rows (priced by
// ledger.Cost, as the chart and the command line price them). The cost
// shows "n/a" while the session's model has no price — also before its
// first request, never as $0.00.
func (u *UI) showTotals(live *liveSession) {
	t := ledger.Sum(live.rows, u.settings.PriceFor)
	_, priced := u.settings.PriceFor(live.info.model)
	u.footer.State.Cost, u.footer.State.CostKnown = t.Cost, t.Priced && priced
	u.side.chip.SetSession(t)
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
