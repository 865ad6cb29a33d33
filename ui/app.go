// Package ui is Tally's desktop window, built with Fyne: the session list,
// the chat with tool cards and approvals, the context gauge, the cache chip,
// the human footer, settings and the first-run welcome with its demo.
//
// The package talks to the engine only through engine/agent's public API
// and events. Engine work (turns, opening sessions, connection tests) runs
// on its own goroutines; results reach the widgets through the Bridge,
// the one file that calls fyne.Do.
package ui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/assets"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
)

// AppID is the application's unique ID (also in FyneApp.toml).
const AppID = "dev.tally.app"

// Options configure the window.
type Options struct {
	// DataDir holds tally.db; "" uses storage.DefaultPath.
	DataDir string
	// Env looks up environment variables; nil uses os.Getenv.
	Env func(string) string
	// Theme forces "light" or "dark" regardless of the saved setting.
	Theme string
}

// Main parses the GUI flags (--data DIR, env TALLY_DATA) and runs the
// window until it is closed. It returns the process exit status.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tally", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringVar(&o.DataDir, "data", os.Getenv("TALLY_DATA"), "")
	fs.StringVar(&o.Theme, "theme", os.Getenv("TALLY_THEME"), "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "tally: %v; the app takes only --data DIR (run `tally help` for the commands)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tally: unexpected argument %q; run `tally help` for the commands\n", fs.Arg(0))
		return 2
	}
	if err := displayAvailable(os.Getenv); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	Run(o)
	return 0
}

// errNoModel is shown in the banner when no endpoint is configured; it is
// a sentence for people, hence the capital and the full stop.
//
//lint:ignore ST1005 shown verbatim in the banner
var errNoModel = errors.New("No model endpoint is configured; open Settings (the gear) to connect one, or try the demo.")

// displayAvailable reports, on X11/Wayland systems, a missing display as
// one clear sentence instead of letting the windowing library panic.
func displayAvailable(getenv func(string) string) error {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("tally: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set); start the app from a desktop session, or use `tally run` to work headless")
		}
	}
	return nil
}

// Run opens the window and blocks until it is closed.
func Run(o Options) {
	a := app.NewWithID(AppID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("Tally")
	w.SetIcon(a.Icon())
	u := New(a, w, NewBridge(), o)
	w.Resize(fyne.NewSize(1280, 800))
	w.SetCloseIntercept(func() {
		u.Close()
		w.Close()
	})
	w.ShowAndRun()
}

// UI is the main window's state. Its fields are only touched on the UI
// goroutine.
type UI struct {
	app    fyne.App
	win    fyne.Window
	bridge *Bridge
	opts   Options
	env    func(string) string

	wb       *workbench.Workbench // the engine's front door; nil when the data could not be opened
	settings workbench.Settings   // a copy of the saved settings, for the UI goroutine

	sessions  *sessionsView
	chat      *chatView
	gauge     *Gauge
	chip      *CacheChip
	checklist *Checklist
	chart     *Chart
	compactB  *widget.Button
	purgeB    *widget.Button
	archiveB  *widget.Button
	cycleB    *widget.Button
	suggest   *fyne.Container // the demo's suggested prompts
	footer    *Footer
	banner    *Banner
	title     *widget.Label
	perm      *permissionBar // mode, network switch, sandbox state and rules of the open session
	demoTag   *widget.Label
	prompt    *promptEntry
	sendB     *widget.Button
	stopB     *widget.Button
	center    *fyne.Container
	chatPane  fyne.CanvasObject
	welcome   fyne.CanvasObject

	live     *liveSession
	autoSend string // a prompt to send as soon as the opening session is shown (the demo)
	warmNext string // a just-created session to warm the cache of when it opens

	// The open dialogs, kept for tests and for closing them.
	compactDlg  *compactionPreview
	purgeDlg    *purgeView
	archive     *archiveBrowser
	compactions int // manual compactions applied
}

// liveSession is the open session and its running turn, if any.
type liveSession struct {
	id       string
	sess     *agent.Session
	ops      sessionOps // the session's compaction, purge and archive calls
	demo     bool
	model    string
	noModel  error // why turns cannot run (no endpoint configured)
	running  bool
	cancel   context.CancelFunc
	stopped  bool
	maxSteps int
	window   int
	perm     permState
}

// permState is what the header shows of a session's permissions, read on
// the engine side when the session opens.
type permState struct {
	network   bool
	sandboxed bool
	sandbox   string // the sandbox note, e.g. "not sandboxed"
}

// New builds the window's content into w. It opens the store under
// o.DataDir; if that fails the window explains why and what to do.
func New(a fyne.App, w fyne.Window, b *Bridge, o Options) *UI {
	u := &UI{app: a, win: w, bridge: b, opts: o, env: o.Env}
	if u.env == nil {
		u.env = os.Getenv
	}
	u.start()
	return u
}

// start opens the store and builds the window, or shows why the store
// cannot be opened with a Retry that calls start again on the same UI: the
// window's close handler holds this UI, so whatever a retry opens is also
// what closing the window closes.
func (u *UI) start() {
	wb, settingsErr, err := workbench.Open(u.opts.DataDir, func(k string) string { return u.env(k) })
	if err != nil {
		u.applyTheme()
		u.win.SetContent(storeErrorView(err, u.start))
		return
	}
	u.wb = wb
	u.settings, err = wb.Settings(), settingsErr
	u.applyTheme()
	u.build()
	if err != nil {
		u.banner.ShowError(err.Error())
	}
	u.refreshSessions(true)
}

// storeErrorView explains why the data could not be opened.
func storeErrorView(err error, retry func()) fyne.CanvasObject {
	what := "Tally could not open its data."
	todo := err.Error()
	switch {
	case errors.Is(err, workbench.ErrLocked):
		what = "This data is already open in another Tally window."
		todo = "Close the other Tally and press Retry, or start Tally with --data DIR to use another data folder."
	case errors.Is(err, workbench.ErrNewerFormat):
		what = "This data was written by a newer version of Tally."
		todo = "Install the newer Tally to open it, or start with --data DIR to use another data folder."
	case errors.Is(err, workbench.ErrCorrupt):
		what = "Tally's database file is damaged; it was left untouched."
		todo = "Restore a backup or move the file aside, then press Retry. (" + err.Error() + ")"
	}
	head := widget.NewLabelWithStyle(what, fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	body := &widget.Label{Text: todo, Wrapping: fyne.TextWrapWord, Alignment: fyne.TextAlignCenter}
	btn := &widget.Button{Text: "Retry", Icon: theme.ViewRefreshIcon(), Importance: widget.HighImportance, OnTapped: retry}
	box := container.NewVBox(head, body, container.NewCenter(btn))
	return container.NewCenter(container.NewGridWrap(fyne.NewSize(560, 200), box))
}

func (u *UI) applyTheme() {
	name := u.settings.Theme
	if u.opts.Theme != "" {
		name = u.opts.Theme
	}
	u.app.Settings().SetTheme(themeFor(name))
}

// build lays the main window out.
func (u *UI) build() {
	u.banner = NewBanner()
	u.gauge = NewGauge()
	u.chip = NewCacheChip()
	u.checklist = NewChecklist()
	u.chart = NewChart()
	u.compactB = &widget.Button{Text: "Compact…", Icon: theme.ViewRestoreIcon(), OnTapped: u.startCompaction}
	u.purgeB = &widget.Button{Text: "Purge…", Icon: theme.ContentCutIcon(), OnTapped: u.startPurge}
	u.archiveB = &widget.Button{Text: "Archive", Icon: theme.HistoryIcon(), OnTapped: u.showArchive}
	u.cycleB = &widget.Button{Text: "New cycle", Icon: theme.ContentAddIcon(), OnTapped: u.startNewCycle}
	u.suggest = u.demoSuggestions()
	u.footer = NewFooter(func(d time.Duration, fn func()) { u.bridge.After(d, fn) })
	u.chat = newChatView(u.bridge.Do, u.decide, func(s string) { u.app.Clipboard().SetContent(s) })
	u.sessions = newSessionsView(u)
	u.perm = newPermissionBar(u)
	u.title = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis}
	u.demoTag = &widget.Label{Text: "Demo — scripted model, no network", Importance: widget.WarningImportance, TextStyle: fyne.TextStyle{Bold: true}}
	u.demoTag.Hide()
	u.prompt = newPromptEntry(u.send)
	u.sendB = &widget.Button{Text: "Send", Icon: theme.MailSendIcon(), Importance: widget.HighImportance, OnTapped: u.send}
	u.stopB = &widget.Button{Text: "Stop", Icon: theme.MediaStopIcon(), Importance: widget.DangerImportance, OnTapped: u.stop}
	u.stopB.Disable()
	settingsB := &widget.Button{Icon: theme.SettingsIcon(), Importance: widget.LowImportance, OnTapped: u.showSettings}

	hint := &widget.Label{Text: "Ctrl+Enter sends", Importance: widget.LowImportance}
	buttons := container.NewVBox(u.sendB, u.stopB, hint)
	input := container.NewBorder(u.suggest, nil, nil, buttons, u.prompt)
	top := container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewHBox(u.demoTag, settingsB), u.title),
		u.perm.box, u.banner)
	u.chatPane = container.NewBorder(nil, input, nil, nil, u.chat.box)
	u.welcome = u.welcomeView()
	u.center = container.NewStack(u.welcome)
	main := container.NewBorder(top, nil, nil, nil, u.center)

	// The right column: the checklist takes the free height; under it the
	// context gauge with its actions, the cache chip and the chart.
	actions := container.NewGridWithColumns(2, u.compactB, u.purgeB, u.cycleB, u.archiveB)
	bottom := container.NewVBox(widget.NewSeparator(), u.gauge, actions,
		container.NewHBox(u.chip, layout.NewSpacer()), widget.NewSeparator(), u.chart)
	right := container.NewPadded(container.NewBorder(nil, bottom, nil, nil, u.checklist))
	split := container.NewHSplit(main, right)
	split.Offset = 0.7
	outer := container.NewHSplit(u.sessions.box, split)
	outer.Offset = 0.2
	u.win.SetContent(container.NewBorder(nil, u.footer, nil, nil, outer))
	u.setIdle()
}

// Close stops a running turn and releases the store and the demo model.
func (u *UI) Close() {
	if u.live != nil && u.live.cancel != nil {
		u.live.cancel()
	}
	if u.wb != nil {
		_ = u.wb.Close()
	}
}

// resolved merges the environment and the saved settings.
func (u *UI) resolved() workbench.Resolved {
	return u.wb.ResolveWith(workbench.Flags{}, u.settings)
}

// configured reports whether a model endpoint is set up.
func (u *UI) configured() bool { return u.resolved().Check() == nil }

// showChat puts the chat in the centre; showWelcome the welcome view.
func (u *UI) showChat() {
	u.center.Objects = []fyne.CanvasObject{u.chatPane}
	u.center.Refresh()
}

func (u *UI) showWelcome() {
	u.welcome = u.welcomeView()
	u.center.Objects = []fyne.CanvasObject{u.welcome}
	u.center.Refresh()
	u.title.SetText("")
	u.perm.load(nil)
	u.demoTag.Hide()
	u.win.SetTitle("Tally")
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
		err = nil
	}
	return cfg, err
}

// openSession opens a stored session off the UI goroutine and shows it.
func (u *UI) openSession(id string) {
	if u.live != nil && u.live.id == id {
		return
	}
	u.stopTurn()
	live := &liveSession{id: id, maxSteps: agent.DefaultMaxSteps}
	u.live = live
	u.chat.clear()
	u.checklist.SetItems(nil)
	u.chart.SetRows(nil, 0)
	u.footer.State.Drift, u.footer.State.Alerts, u.footer.State.WarmUp = "", nil, ""
	u.showChat()
	u.title.SetText("Opening…")
	wb := u.wb
	go func() {
		meta, err := wb.Session(id)
		isDemo := err == nil && workbench.IsDemo(meta)
		var cfg agent.Config
		if err == nil {
			u.bridge.DoAndWait(func() { cfg, err = u.agentConfig(live, isDemo) })
		}
		var sess *agent.Session
		if err == nil {
			sess, err = agent.Open(cfg, id)
		}
		u.loaded(live, sess, isDemo, cfg, err)
	}()
}

// loaded gathers what the panels need from a freshly opened session (on
// the engine side) and hands it to the UI goroutine.
func (u *UI) loaded(live *liveSession, sess *agent.Session, isDemo bool, cfg agent.Config, err error) {
	if err != nil {
		u.bridge.Do(func() {
			if u.live != live {
				return
			}
			u.live = nil
			u.showWelcome()
			u.banner.ShowError("Could not open the session: " + err.Error())
		})
		return
	}
	msgs := sess.Messages()
	past, _ := sess.History()
	level, exact := sess.ContextTokens()
	compactAt, cycleAt := sess.Thresholds()
	window := sess.Window()
	meta := sess.Meta()
	rows, _ := sess.Ledger()
	items := sess.Checklist()
	alerts := sess.Alerts()
	perm := permState{network: sess.AllowNetwork(), sandboxed: sess.Sandboxed(), sandbox: sess.SandboxNote()}
	u.bridge.Do(func() {
		if u.live != live {
			return
		}
		live.sess, live.ops, live.demo, live.model, live.window = sess, engineOps{sess}, isDemo, cfg.ModelName, window
		live.perm = perm
		u.perm.load(live)
		u.title.SetText(meta.Title + "  ·  " + meta.Workspace)
		u.win.SetTitle("Tally — " + meta.Title)
		showIf(u.demoTag, isDemo)
		showIf(u.suggest, isDemo)
		u.chat.setHistory(past, msgs)
		u.gauge.SetLevel(level, window, exact)
		u.gauge.SetThresholds(compactAt, cycleAt)
		u.applyLedger(rows, live.model)
		u.checklist.SetItems(items)
		u.footer.State.Alerts = alerts
		u.sessions.selectID(live.id)
		if live.noModel != nil {
			u.banner.ShowAction(live.noModel.Error(), "Settings", u.showSettings)
		} else {
			u.banner.Hide()
		}
		u.setIdle()
		if u.warmNext == live.id {
			u.warmNext = ""
			if u.settings.WarmUp && !isDemo && live.noModel == nil {
				u.warmUp(live)
			}
		}
		if u.settings.LastSession != live.id {
			u.settings.LastSession = live.id
			u.saveSettings(u.settings)
		}
		u.prompt.FocusIn()
		if u.autoSend != "" && live.noModel == nil {
			u.prompt.SetText(u.autoSend)
			u.autoSend = ""
			u.send()
		}
	})
}

// applyLedger sets the footer cost, the last duration and the chip from
// stored usage rows.
func (u *UI) applyLedger(rows []agent.LedgerRow, model string) {
	cost := make([]costRow, 0, len(rows))
	hit, all := 0, 0
	for _, r := range rows {
		cost = append(cost, costRow{Model: r.Model, Prompt: r.PromptTokens, Hit: r.CacheHitTokens,
			Miss: r.CacheMissTokens, Completion: r.CompletionTokens, CacheReported: r.CacheReported})
		if r.CacheReported {
			hit += r.CacheHitTokens
			all += r.PromptTokens
		}
	}
	u.footer.State.Model = model
	u.footer.State.LastDuration = 0
	u.footer.State.RetryAt = time.Time{}
	u.chip.Reset()
	u.chip.SetSession(hit, all)
	if n := len(rows); n > 0 {
		last := rows[n-1]
		u.footer.State.LastDuration = time.Duration(last.DurationMS) * time.Millisecond
		u.chip.Set(agent.Usage{PromptTokens: last.PromptTokens, CacheHitTokens: last.CacheHitTokens,
			CacheMissTokens: last.CacheMissTokens, CacheReported: last.CacheReported, First: last.Request == 1})
	}
	u.footer.SetCostFromLedger(cost, u.settings)
	p, ok := u.settings.PriceFor(model)
	u.chart.SetPrice(p, ok)
	window := 0
	if u.live != nil {
		window = u.live.window
	}
	u.chart.SetRows(rows, window)
}

// warmUp sends the new session's stable prefix once, off the UI goroutine,
// so its first real request is billed at the cache-hit price. The cost
// arrives as a usage event and is shown in the footer.
func (u *UI) warmUp(live *liveSession) {
	sess := live.sess
	u.footer.State.WarmUp = "warming the cache…"
	u.footer.Update()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := sess.WarmUp(ctx)
		if err != nil {
			u.bridge.Do(func() {
				if u.live == live {
					u.footer.State.WarmUp = "warm-up failed"
					u.footer.Update()
				}
			})
		}
	}()
}

// warmUpText is the footer part for a warm-up request's usage.
func (u *UI) warmUpText(us agent.Usage) string {
	p, ok := u.settings.PriceFor(us.Model)
	if !ok {
		return fmt.Sprintf("warm-up %s tokens (cost n/a)", tokensShort(us.PromptTokens))
	}
	return fmt.Sprintf("warm-up %s tokens %s", tokensShort(us.PromptTokens),
		dollars(p.Cost(us.CacheHitTokens, us.PromptTokens-us.CacheHitTokens, us.CompletionTokens)))
}

// askCompaction shows the engine's compaction question ("ask" mode) in the
// preview dialog; it returns a function that closes the dialog unanswered.
func (u *UI) askCompaction(live *liveSession, plan compact.Plan, answer func(bool)) func() {
	if u.live != live {
		answer(false)
		return nil
	}
	u.footer.State.Run = "waiting for your answer: compact now?"
	u.footer.Update()
	_, closeFn := u.showCompactionDialog(plan, nil, func(ok bool) {
		if u.live == live && live.running {
			u.footer.State.Run = "running"
			if ok {
				u.footer.State.Run = "compacting…"
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
	ok := !busy && u.live != nil && u.live.ops != nil
	for _, b := range []*widget.Button{u.compactB, u.purgeB, u.cycleB} {
		if ok {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	if u.live != nil && u.live.ops != nil {
		u.archiveB.Enable()
	} else {
		u.archiveB.Disable()
	}
}

// saveSettings stores s off the UI goroutine.
func (u *UI) saveSettings(s workbench.Settings) {
	wb := u.wb
	go func() {
		if err := wb.SaveSettings(s); err != nil {
			u.bridge.Do(func() { u.banner.ShowError("Could not save the settings: " + err.Error()) })
		}
	}()
}

// send starts a turn with the prompt's text.
func (u *UI) send() {
	live := u.live
	text := strings.TrimSpace(u.prompt.Text)
	if live == nil || live.sess == nil || live.running || text == "" {
		return
	}
	if live.noModel != nil {
		u.banner.ShowAction(live.noModel.Error(), "Settings", u.showSettings)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	live.running, live.cancel, live.stopped = true, cancel, false
	u.prompt.SetText("")
	u.setRunning(1)
	u.banner.Hide()
	sess := live.sess
	u.setBusyButtons(true)
	go func() {
		res, err := sess.Run(ctx, text)
		level, exact := sess.ContextTokens()
		alerts := sess.Alerts()
		u.bridge.Do(func() {
			if u.live == live {
				u.footer.State.Alerts = alerts
			}
			u.turnDone(live, res, err, level, exact)
		})
	}()
}

// stop cancels the running turn; the engine keeps the transcript valid.
func (u *UI) stop() {
	if u.live != nil && u.live.running && u.live.cancel != nil {
		u.live.stopped = true
		u.live.cancel()
		u.footer.State.Run = "stopping…"
		u.footer.Update()
	}
}

// stopTurn cancels any turn of the current session before switching away.
func (u *UI) stopTurn() {
	if u.live != nil && u.live.cancel != nil {
		u.live.cancel()
	}
}

func (u *UI) turnDone(live *liveSession, res agent.Result, err error, level int, exact bool) {
	live.running = false
	live.cancel = nil
	if u.live != live {
		return
	}
	u.chat.dropStreaming()
	u.footer.ClearRetry()
	switch {
	case res.Reason == agent.ReasonCancelled:
		u.footer.State.Run = "stopped"
		u.chat.notice("Stopped. The conversation is saved; send a message to continue.", false)
	case err != nil:
		u.footer.State.Run = "failed"
		u.banner.ShowError(friendlyError(err))
	default:
		u.footer.State.Run = "idle"
	}
	u.gauge.SetLevel(level, live.window, exact)
	u.setIdleButtons()
	u.footer.Update()
	u.sessions.refresh()
}

// friendlyError phrases an engine error for the banner.
func friendlyError(err error) string {
	switch {
	case errors.Is(err, llm.ErrUnreachable):
		return "Cannot reach the model server: " + err.Error()
	case llm.IsUnauthorized(err):
		return "The model server rejected the API key; open Settings and check the key."
	case llm.IsModelNotFound(err):
		return "The model server does not know this model; open Settings and check the model name."
	}
	return "The turn failed: " + err.Error()
}

func (u *UI) setRunning(step int) {
	u.sendB.Disable()
	u.stopB.Enable()
	u.footer.State.Run = fmt.Sprintf("running step %d/%d", step, u.live.maxSteps)
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
		if u.footer.State.Run != "stopped" && u.footer.State.Run != "failed" {
			u.footer.State.Run = "idle"
		}
	}
	u.footer.Update()
}

// onEvent applies one engine event on the UI goroutine.
func (u *UI) onEvent(live *liveSession, e agent.Event) {
	if u.live != live {
		return
	}
	switch e.Kind {
	case agent.EventTurnStart:
		u.setRunning(1)
	case agent.EventDelta:
		u.footer.ClearRetry()
		u.chat.delta(e.Delta.Content, e.Delta.Reasoning)
	case agent.EventMessage:
		u.chat.commit(e.Message)
	case agent.EventToolStart:
		u.chat.toolStarted(e.Call.ID)
		u.footer.State.Run = fmt.Sprintf("running step %d/%d · %s", e.Step, live.maxSteps, e.Call.Name)
		u.footer.Update()
	case agent.EventChecklist:
		u.checklist.SetItems(e.Checklist)
	case agent.EventDrift:
		if d := e.Drift; d != nil && d.Changed {
			u.chart.NoteDrift(*d)
			if !d.Booked {
				u.footer.State.Drift = DriftAlert(*d)
				u.footer.Update()
			}
		}
	case agent.EventRebuild:
		if e.Rebuild != nil {
			u.showRebuild(*e.Rebuild)
			u.chart.NoteRebuild(rebuildKind(e.Rebuild.Reason))
			u.gauge.SetLevel(e.Rebuild.TokensAfter, live.window, false)
		} else {
			u.chart.NoteRebuild(rebuildKind(e.Reason))
		}
	case agent.EventUsage:
		us := *e.Usage
		u.footer.ClearRetry()
		u.chart.SetWindow(us.Window)
		u.chart.Add(rowOfUsage(us))
		if us.WarmUp {
			u.footer.State.WarmUp = u.warmUpText(us)
			u.addCost(live, us)
			u.footer.Update()
			return
		}
		u.gauge.SetLevel(us.ContextTokens, us.Window, us.Exact)
		u.chip.Update(us)
		u.footer.State.LastDuration = us.Duration
		u.addCost(live, us)
		u.footer.State.Run = fmt.Sprintf("running step %d/%d", e.Step, live.maxSteps)
		u.footer.Update()
	case agent.EventRetry:
		u.footer.StartRetry(e.Retry.Wait, e.Retry.Attempt, e.Retry.MaxAttempts)
	case agent.EventError:
		u.chat.dropStreaming()
	}
}

// addCost adds a request's cost to the footer.
func (u *UI) addCost(live *liveSession, us agent.Usage) {
	if p, ok := u.settings.PriceFor(live.model); ok && u.footer.State.CostKnown {
		hit, miss := us.CacheHitTokens, us.CacheMissTokens
		if !us.CacheReported {
			hit, miss = 0, us.PromptTokens
		}
		u.footer.State.Cost += p.Cost(hit, miss, us.CompletionTokens)
	} else if !ok {
		u.footer.State.CostKnown = false
	}
}

// rowOfUsage turns a usage event into a ledger row for the chart.
func rowOfUsage(us agent.Usage) ledger.Row {
	r := ledger.Row{Time: time.Now(), Model: us.Model, PromptTokens: us.PromptTokens, CompletionTokens: us.CompletionTokens,
		CacheHitTokens: us.CacheHitTokens, CacheMissTokens: us.CacheMissTokens, CacheReported: us.CacheReported,
		DurationMS: us.Duration.Milliseconds(), ContextTokens: us.ContextTokens}
	if us.WarmUp {
		r.Kind = ledger.KindWarmUp
	}
	return r
}

// showApproval puts the Approve / Deny / Always buttons on the call's card.
func (u *UI) showApproval(live *liveSession, p *pendingApproval) {
	if u.live != live {
		p.answer(tool.Deny)
		return
	}
	it := u.chat.byCall[p.req.CallID]
	if it == nil {
		it = &chatItem{kind: itemTool, call: toolCallOf(p.req), title: p.req.Summary,
			argsText: argsDisplay(p.req.Tool, p.req.Arguments)}
		u.chat.byCall[p.req.CallID] = it
		u.chat.appendItems(it)
	}
	it.approval = p
	it.status = toolWaiting
	u.chat.refreshItem(it)
	u.chat.list.ScrollToBottom()
	u.footer.State.Run = "waiting for your approval"
	u.footer.Update()
}

func (u *UI) withdrawApproval(live *liveSession, p *pendingApproval) {
	it := u.chat.byCall[p.req.CallID]
	if it == nil || it.approval != p {
		return
	}
	it.approval = nil
	it.status = toolStopped
	u.chat.refreshItem(it)
}

// decide answers a pending approval from its card.
func (u *UI) decide(it *chatItem, d tool.Decision) {
	p := it.approval
	if p == nil {
		return
	}
	it.approval = nil
	switch d {
	case tool.Approve:
		it.decided, it.status = "Approved by you", toolRunning
	case tool.ApproveAlways:
		it.decided, it.status = "Approved — "+it.call.Name+" is allowed for the rest of this session (revoke under Rules)", toolRunning
	default:
		it.decided, it.status = "Denied by you; the model was told", toolDenied
	}
	u.chat.refreshItem(it)
	p.answer(d)
	if u.live != nil && u.live.running {
		u.footer.State.Run = fmt.Sprintf("running · %s", it.call.Name)
		u.footer.Update()
	}
}
