// Package ui is Tally's desktop window, built with Fyne: the session list,
// the chat with tool cards and approvals, the context gauge, the cache chip,
// the human footer, settings and the first-run welcome with its demo.
//
// The package talks to the engine through the workbench (the front door: settings, opening and creating
// sessions, classifying model errors) and engine/agent's sessions and events; it shows the numbers the engine
// reports and derives none. Engine work (turns, opening sessions, connection tests) runs off the UI goroutine
// through the Bridge, the one file that starts goroutines and calls fyne.Do; results reach the widgets (package
// ui/widget) on the UI goroutine. Whole views are packages of their own that never see the UI type — ui/chat,
// ui/settings, ui/compaction, ui/extensions, ui/rewind, ui/fork and ui/memory — and get what they need from the window as
// callbacks (a Host, a Session).
package ui

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/assets"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
	"github.com/tally-dev/tally/ui/fleet"
	uifork "github.com/tally-dev/tally/ui/fork"
	uimemory "github.com/tally-dev/tally/ui/memory"
	"github.com/tally-dev/tally/ui/rewind"
	tw "github.com/tally-dev/tally/ui/widget"
)

// AppID is the application's unique ID (also in FyneApp.toml).
const AppID = "dev.tally.app"

// errNoModel is shown in the banner when no endpoint is configured; it is
// a sentence for people, hence the capital and the full stop.
//
//lint:ignore ST1005 shown verbatim in the banner
var errNoModel = errors.New("No model endpoint is configured; open Settings (the gear) to connect one, or try the demo.")

// Options configure the window.
type Options struct {
	// DataDir holds tally.db; "" uses storage.DefaultPath.
	DataDir string
	// Env looks up environment variables; nil uses os.Getenv.
	Env func(string) string
	// Theme forces "light" or "dark" regardless of the saved setting.
	Theme string
	// Serve, when set, is started with the open workbench so that other
	// processes (the command line) can read through the app while it holds
	// the store; the stop function it returns runs when the window closes.
	Serve func(wb *workbench.Workbench) (stop func(), err error)
}

// Main parses the GUI flags (--data DIR, env TALLY_DATA) and runs the
// window until it is closed. It returns the process exit status.
func Main(args []string, stderr io.Writer, serve func(*workbench.Workbench) (func(), error)) int {
	fs := flag.NewFlagSet("tally", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := Options{Serve: serve}
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
	if os.Getenv("GOGC") == "" {
		// The window lives long and holds a session's whole history:
		// collecting at a quarter of the live heap instead of all of it
		// keeps its resident memory about 60 MB lower with a 10,000-message
		// session (see docs/benchmarks.md), for GC cycles a person
		// cannot see (a wheel notch costs the same).
		debug.SetGCPercent(appGCPercent)
	}
	Run(o)
	return 0
}

// appGCPercent is the desktop app's garbage collection target (GOGC); the
// environment's GOGC, when set, wins.
const appGCPercent = 25

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
	var serving servingStop
	o.Serve = serving.wrap(o.Serve)
	u := New(a, w, NewBridge(), o)
	w.Resize(u.windowSize())
	w.SetCloseIntercept(func() {
		u.confirmClose(func() {
			u.Close()
			w.Close()
		})
	})
	// A kill (SIGTERM) or Ctrl-C closes the app like its close button,
	// removing the command line's socket.
	defer closeOnSignal(u.bridge, func() { u.Close(); a.Quit() }, serving.run, os.Exit)()
	w.ShowAndRun()
	u.loopEnded()
}

// loopEnded closes the UI once the window's event loop has ended, if
// nothing closed it before: Fyne catches SIGTERM and SIGINT itself and
// may quit the loop before the app's own handler gets to run, which lost
// the window's size and the draft.
func (u *UI) loopEnded() { u.Close() }

// UI is the main window's state. Its fields are only touched on the UI
// goroutine.
type UI struct {
	app    fyne.App
	win    fyne.Window
	bridge *Bridge
	opts   Options
	env    func(string) string

	wb          *workbench.Workbench // the engine's front door; nil when the data could not be opened
	stopServing func()               // ends serving the command line's reads
	settings    workbench.Settings   // a copy of the saved settings, for the UI goroutine

	sessions *sessionsView
	panels   *panels
	chat     *chat.View
	maint    *compaction.Views // the compaction, purge, cycle and archive views
	rewinds  *rewind.Views     // the Rewind dialog and the Changes view
	fleet    *fleet.View       // every session that runs, waits for you or ended a turn
	memory   *uimemory.Panel   // the Memory panel; a session left proposes through it
	head     header
	input    input
	side     sidePanel
	actions  actions
	center   center
	banner   *tw.Banner
	footer   *tw.Footer

	live    *liveSession
	bg      map[string]*liveSession // sessions whose turns run while another is shown
	next    onOpen                  // what to do once the session being opened is shown
	view    dialog.Dialog           // the sheet, search or settings shown (see showView)
	slow    slowWatch               // the footer's watch over a slow tool call
	closed  bool                    // Close ran: the store is closed
	focused bool                    // the window has the keyboard focus
	saving  sync.WaitGroup          // writes closing waits for: settings saves, forgetting an interrupted turn

	exporting *exportDialog // the export dialog shown last
	merging   dialog.Dialog // the merge review of a worktree shown last

	prefGen    int           // bumps on each change of the keyboard sheet's preferences (see keys.go)
	scaleLabel *widget.Label // the text size on the keyboard sheet, once opened
}

// header is what sits above the chat: the open session's title, its
// permissions, the demo's tag and the announcement of a coming automatic
// compaction.
type header struct {
	title   *widget.Label
	perm    *permissionBar // mode, network switch, sandbox state and rules of the open session
	demoTag *widget.Label
	notice  *compaction.Notice
}

// input is what sits under the chat: the prompt box, Send and Stop, and
// the demo's suggested prompts.
type input struct {
	prompt     *promptEntry
	send, stop *widget.Button
	suggest    *fyne.Container // the demo's suggested prompts
	suggestBox *fyne.Container
	hint       *widget.Label // which key sends
	draftGen   int           // bumps on each keystroke; the last one stores the draft
	complete   *completer    // the list of commands and resources
	images     *imageTray    // the pictures attached to the prompt (see images.go)
}

// sidePanel is the right column: the checklist, and under it the context
// gauge with the line about MCP tool schemas, the cache chip and the
// request chart.
type sidePanel struct {
	checklist *tw.Checklist
	gauge     *tw.Gauge
	keepWhy   *widget.Label // why compaction triggers where the gauge marks it
	mcpInfo   *widget.Label
	chip      *tw.CacheChip
	chart     *tw.Chart
}

// actions are the open session's maintenance buttons under the gauge, and
// the line that says why they are off (Fyne has no tooltips).
type actions struct {
	compact, purge, cycle, archive, changes *widget.Button
	why                                     *widget.Label
}

// center is the window's middle: the chat of the open session, or the
// welcome when none is.
type center struct {
	stack   *fyne.Container
	chat    fyne.CanvasObject
	welcome fyne.CanvasObject
}

// onOpen is what the UI does once the session it opens is shown.
type onOpen struct {
	autoSend string               // a prompt to send (the demo's)
	warmUp   string               // the ID of a just-created session to warm the cache of
	reveal   *workbench.SearchHit // a search hit to scroll to
}

// New builds the window's content into w. It opens the store under
// o.DataDir; if that fails the window explains why and what to do.
func New(a fyne.App, w fyne.Window, b *Bridge, o Options) *UI {
	u := &UI{app: a, win: w, bridge: b, opts: o, env: o.Env, bg: map[string]*liveSession{}, focused: true}
	if u.env == nil {
		u.env = os.Getenv
	}
	a.Lifecycle().SetOnEnteredForeground(func() { u.focused = true })
	a.Lifecycle().SetOnExitedForeground(func() { u.focused = false })
	u.start()
	return u
}

// start opens the store and builds the window, or shows why the store
// cannot be opened with a Retry that calls start again on the same UI: the
// window's close handler holds this UI, so whatever a retry opens is also
// what closing the window closes.
func (u *UI) start() {
	wb, settingsErr, err := workbench.Open(u.opts.DataDir, func(k string) string { return u.env(k) })
	if err == nil && wb.Damage() != nil {
		// Damaged past its header: the app would write to it; the
		// command line can still export what it holds.
		err = wb.Damage()
		_ = wb.Close()
	}
	if err != nil {
		u.applyTheme()
		u.win.SetContent(storeErrorView(err, u.start))
		return
	}
	u.wb = wb
	if u.opts.Serve != nil {
		if stop, err := u.opts.Serve(wb); err == nil {
			u.stopServing = stop
		}
	}
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
		todo = "Copy out what you need with `tally export SESSION`, then restore a backup or move the file aside and press Retry. (" + err.Error() + ")"
	}
	head := widget.NewLabelWithStyle(what, fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	body := &widget.Label{Text: todo, Wrapping: fyne.TextWrapWord, Alignment: fyne.TextAlignCenter}
	btn := &widget.Button{Text: "Retry", Icon: theme.ViewRefreshIcon(), Importance: widget.HighImportance, OnTapped: retry}
	box := container.NewVBox(head, body, container.NewCenter(btn))
	return container.NewCenter(container.NewGridWrap(fyne.NewSize(560, 200), box))
}

// applyTheme puts the chosen theme, at the chosen text scale, in use.
// Fyne redraws the widgets on the window; the chat also measures its rows
// again and redraws those waiting off screen, which Fyne does not see.
func (u *UI) applyTheme() {
	name := u.settings.Theme
	if u.opts.Theme != "" {
		name = u.opts.Theme
	}
	u.app.Settings().SetTheme(tw.ScaledTheme(name, u.settings.TextScale))
	if u.chat != nil {
		u.chat.ThemeChanged()
	}
}

// build lays the main window out.
func (u *UI) build() {
	u.banner = tw.NewBanner()
	u.maint = compaction.New(u.maintenanceHost())
	u.rewinds = rewind.New(u.rewindHost())
	u.head.notice = u.maint.Notice
	u.side.gauge = tw.NewGauge()
	u.side.chip = tw.NewCacheChip()
	u.side.checklist = tw.NewChecklist()
	u.side.chart = tw.NewChart()
	u.actions.compact = &widget.Button{Text: "Compact…", Icon: theme.ViewRestoreIcon(), OnTapped: u.maint.Compact}
	u.actions.purge = &widget.Button{Text: "Purge…", Icon: theme.ContentCutIcon(), OnTapped: u.maint.Purge}
	u.actions.archive = &widget.Button{Text: "Archive", Icon: theme.HistoryIcon(), OnTapped: u.maint.Archive}
	u.actions.cycle = &widget.Button{Text: "New cycle", Icon: theme.ContentAddIcon(), OnTapped: u.maint.NewCycle}
	u.actions.changes = &widget.Button{Text: "Changes", Icon: theme.DocumentIcon(), OnTapped: u.rewinds.Changes}
	u.input.suggest = u.demoSuggestions()
	u.footer = tw.NewFooter(func(d time.Duration, fn func()) { u.bridge.After(d, fn) })
	u.chat = chat.New(u.bridge.Do, u.decide, func(s string) { u.app.Clipboard().SetContent(s) })
	u.chat.Filled = u.memoryReleaser(settleRelease, textureLife(), releaseMemory)
	u.chat.OnRewind = u.startRewind
	u.chat.OnFork = uifork.New(uifork.Host{Host: u.rewindHost(), Fork: u.wb.ForkSession, Opened: func(id string) { u.sessions.refresh(); u.openSession(id) }}).Fork
	u.chat.OnChild = [2]func(*chat.Item){u.showChildTranscript, u.stopChild}
	u.chat.OnCommand = u.allowCommandFromCard
	u.sessions = newSessionsView(u)
	u.fleet = fleet.New(fleet.Host{Window: u.win, Work: u.bridge.Work, Read: fleet.Reader(u.wb), Show: u.showView, Open: u.openSession,
		Waiting: u.waitingFor, Prices: func(m string) (ledger.Price, bool) { return u.settings.PriceFor(m) }, MaxSteps: maxSteps})
	u.head.perm = newPermissionBar(u)
	u.head.title = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis}
	u.head.demoTag = &widget.Label{Text: "Demo — scripted model", Importance: widget.WarningImportance, TextStyle: fyne.TextStyle{Bold: true}}
	u.head.demoTag.Hide()
	u.input.prompt = newPromptEntry(u.send)
	u.input.complete = newCompleter(u)
	u.input.prompt.OnChanged = func(string) { u.draftChanged(); u.input.complete.changed() }
	u.input.prompt.onKey, u.input.prompt.takesTab = u.input.complete.key, u.input.complete.open
	u.chat.List.OnRune = func(r rune) {
		u.win.Canvas().Focus(u.input.prompt)
		u.input.prompt.TypedRune(r)
	}
	u.input.images = newImageTray(u)
	u.input.prompt.onPaste = u.input.images.pasted
	u.chat.Thumbs.Fetch = u.fetchImage
	u.win.SetOnDropped(u.input.images.dropped)
	u.input.send = &widget.Button{Text: "Send", Icon: theme.MailSendIcon(), Importance: widget.HighImportance, OnTapped: u.send}
	u.input.stop = &widget.Button{Text: "Stop", Icon: theme.MediaStopIcon(), Importance: widget.DangerImportance, OnTapped: u.stop}
	u.input.stop.Disable()
	settingsB := &widget.Button{Icon: theme.SettingsIcon(), Importance: widget.LowImportance, OnTapped: u.showSettings}

	u.input.hint = &widget.Label{Importance: widget.LowImportance}
	u.applyKeys()
	// The image button shares the hint's row, so the prompt area is no taller.
	buttons := container.NewVBox(u.input.send, u.input.stop, container.NewBorder(nil, nil, u.input.images.button, nil, u.input.hint))
	// The suggestions wrap onto more rows rather than widen the window.
	u.input.suggest.Layout = &tw.FlowLayout{}
	u.input.suggestBox = container.NewPadded(u.input.suggest)
	u.input.suggestBox.Hide()
	input := container.NewBorder(container.NewVBox(u.input.suggestBox, u.input.complete.box, u.input.images.box), nil, nil, buttons, u.input.prompt)
	right := container.NewPadded(container.NewBorder(nil, nil, nil, nil, u.side.checklist))
	u.panels = newPanels(u.sessions.box, widget.NewLabel(""), right)
	u.memory = uimemory.New(uimemory.Host{Window: u.win, Work: u.bridge.Work, Memory: uimemory.Over(u.wb), Session: u.shownSession, Show: u.showView})
	top := container.NewVBox(
		container.NewBorder(nil, nil, u.panels.leftB, container.NewHBox(u.head.demoTag, u.fleet.Button, u.memory.Button, u.panels.rightB, settingsB), u.head.title),
		u.head.perm.box, u.banner, u.head.notice)
	u.center.chat = container.NewBorder(nil, input, nil, nil, u.chat.Box)
	u.center.welcome = u.welcomeView()
	u.center.stack = container.NewStack(u.center.welcome)
	main := container.NewBorder(top, nil, nil, nil, u.center.stack)

	// The right column: the checklist takes the free height; under it the
	// context gauge with its actions, the cache chip and the chart.
	actions := container.NewGridWithColumns(2, u.actions.compact, u.actions.purge, u.actions.cycle, u.actions.archive, u.actions.changes)
	u.actions.why = &widget.Label{Importance: widget.LowImportance, Wrapping: fyne.TextWrapWord, SizeName: theme.SizeNameCaptionText}
	u.side.mcpInfo = &widget.Label{Importance: widget.LowImportance, Wrapping: fyne.TextWrapWord, SizeName: theme.SizeNameCaptionText}
	u.side.mcpInfo.Hide()
	u.side.keepWhy = &widget.Label{Importance: widget.LowImportance, Wrapping: fyne.TextWrapWord, SizeName: theme.SizeNameCaptionText}
	u.side.keepWhy.Hide()
	bottom := container.NewVBox(widget.NewSeparator(), u.side.gauge, u.side.keepWhy, u.side.mcpInfo, actions, u.actions.why,
		container.NewHBox(u.side.chip, layout.NewSpacer()), widget.NewSeparator(), u.side.chart)
	// The checklist takes what the rest leaves and scrolls inside it, so in
	// a short window it never draws over the gauge; a window too short for
	// the rest (large text) scrolls the whole column. Its width is that of
	// the gauge, the buttons and the chart: the checklist cuts its titles
	// to fit, so a long item never widens the column.
	right.Objects[0] = container.NewVScroll(container.NewBorder(nil, bottom, nil, nil, container.NewVScroll(u.side.checklist)))
	u.panels.center = main
	u.panels.arrange()
	u.win.SetContent(container.NewBorder(nil, u.footer, nil, nil, u.panels.content()))
	u.setIdle()
	u.installShortcuts()
}

// Close keeps the shown session's draft, stops every running turn (shown
// or in the background) and releases the store and the demo model.
func (u *UI) Close() {
	if u.closed {
		return
	}
	u.closed = true
	if u.live != nil && u.live.sess != nil && u.wb != nil && u.input.prompt != nil {
		// Synchronously: the store closes next.
		if u.input.prompt.Text != u.live.draft {
			_ = u.wb.SaveDraft(u.live.id, u.input.prompt.Text)
		}
	}
	u.saving.Wait() // an earlier save must not land after the one below
	u.keepPlace()
	var closing []func()
	for _, live := range append([]*liveSession{u.live}, bgList(u.bg)...) {
		if live == nil {
			continue
		}
		if live.job.running && u.wb != nil {
			// Synchronously, like the draft: reopening says what happened.
			_ = u.wb.SetInterrupted(live.id, interruptedNote(live))
		}
		if live.job.cancel != nil {
			live.job.cancel(step.ErrClosing) // a reply cut short says Tally closed, not that you stopped it
		}
		if sess := live.sess; sess != nil {
			closing = append(closing, func() { _ = sess.Close() })
		}
	}
	u.bridge.Await(closeWait, closing...)
	if u.stopServing != nil {
		u.stopServing()
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
	u.center.stack.Objects = []fyne.CanvasObject{u.center.chat}
	u.center.stack.Refresh()
}

// resetPanels empties every panel that shows a session: the chat, the
// checklist, the chart, the gauge, the chip, the footer's session parts,
// the banner and the prompt; the session buttons are disabled until one
// opens.
func (u *UI) resetPanels() {
	u.chat.Clear()
	u.side.checklist.SetItems(nil)
	u.side.chart.SetRows(nil, 0)
	u.side.gauge.SetLevel(0, 0, false)
	u.side.gauge.SetThresholds(0, 0)
	u.side.chip.Reset()
	u.banner.Hide()
	u.head.notice.Hide()
	u.input.prompt.SetText("")
	u.input.images.clear()
	u.footer.State = tw.FooterState{}
	u.footer.Update()
	u.setIdle()
}

func (u *UI) showWelcome() {
	u.resetPanels()
	u.center.welcome = u.welcomeView()
	u.center.stack.Objects = []fyne.CanvasObject{u.center.welcome}
	u.center.stack.Refresh()
	u.head.title.SetText("")
	u.head.perm.load(nil)
	u.head.demoTag.Hide()
	u.win.SetTitle("Tally")
}

// bgList lists the background sessions.
func bgList(m map[string]*liveSession) []*liveSession {
	out := make([]*liveSession, 0, len(m))
	for _, l := range m {
		out = append(out, l)
	}
	return out
}

// defaultWindow is the window's size on a first launch.
var defaultWindow = fyne.NewSize(1280, 800)

// windowSize is the size the window had when it was last closed, or the
// default. (Fyne does not expose window positions; the window manager
// places it.)
func (u *UI) windowSize() fyne.Size {
	if w := u.settings.Window; w.Width >= 400 && w.Height >= 300 {
		return fyne.NewSize(w.Width, w.Height)
	}
	return defaultWindow
}

// keepPlace stores, synchronously (the store closes next), the window's
// size and the shown session, for the next launch.
func (u *UI) keepPlace() {
	if u.wb == nil || u.win == nil {
		return
	}
	saved := u.wb.Settings()
	changed := false
	if u.live != nil && u.live.sess != nil && saved.LastSession != u.live.id {
		saved.LastSession, changed = u.live.id, true
	}
	if saved.TextScale != u.settings.TextScale || saved.EnterNewline != u.settings.EnterNewline {
		// Changed on the keyboard sheet, and not saved yet.
		saved.TextScale, saved.EnterNewline, changed = u.settings.TextScale, u.settings.EnterNewline, true
	}
	if sz := u.win.Canvas().Size(); sz.Width >= 400 && sz.Height >= 300 &&
		(saved.Window.Width != sz.Width || saved.Window.Height != sz.Height) {
		saved.Window.Width, saved.Window.Height, changed = sz.Width, sz.Height, true
	}
	if changed {
		_ = u.wb.SaveSettings(saved)
	}
}

// closeWait bounds how long closing the window waits for the open sessions
// to stop their MCP servers.
const closeWait = 3 * time.Second
