package settings

import (
	"context"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Settings → Language servers: every configured server with what it
// handles and its state — live from the shown session's servers, else
// from the configuration — an Open log button where it has a log, and
// where the user adds servers.

// lspShape is the shape of the user's language-server file, as the
// settings show it.
const lspShape = `{"servers": {"name": {"command": "…", "args": ["--stdio"], "extensions": [".ext"], ` +
	`"languages": ["id"], "init_options": {…}, "disabled": false}}}`

// lspSection is the settings' list of language servers.
type lspSection struct {
	h       Host
	rows    *fyne.Container // one row per server; "Reading…" until loaded
	where   *widget.Label   // where the servers are kept, and the file's shape
	note    *widget.Label   // whose states these are, or what is wrong with the file
	changed *widget.Label   // what the last change did, or why it failed
	add     *widget.Button  // Add server…
	logs    map[string]*widget.Button
	box     *fyne.Container

	status func() []lsp.ServerStatus // the shown session's, or nil
	demo   bool
	path   string                          // the user's file; "" when unknown
	conf   map[string]lsp.ConfiguredServer // the configured servers by name
	busy   bool                            // a change is being written
}

// lspListing is what the section shows, read off the UI goroutine.
type lspListing struct {
	servers  []lsp.ServerStatus
	live     bool                   // the states are the shown session's
	path     string                 // the user's file; "" when unknown
	problem  string                 // what is wrong with the user's file or its folder
	configs  []lsp.ConfiguredServer // every configured server, disabled ones too
	readable bool                   // the user's file was read, so it can be changed
}

// newLSPSection builds the section and reads the servers' states off the
// UI goroutine.
func newLSPSection(h Host) *lspSection {
	s := &lspSection{h: h, logs: map[string]*widget.Button{}}
	s.rows = container.NewVBox(&widget.Label{Text: "Reading the language servers…", Importance: widget.LowImportance})
	s.note = &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
	s.note.Hide()
	s.where = &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
	s.changed = &widget.Label{Wrapping: fyne.TextWrapWord, SizeName: theme.SizeNameCaptionText}
	s.changed.Hide()
	s.add = &widget.Button{Text: "Add server…", Icon: theme.ContentAddIcon(), OnTapped: func() { s.showServerForm(nil) }}
	s.add.Disable() // until the file's place is known
	applies := &widget.Label{Text: "Changes are saved at once and apply to new sessions; open sessions keep their servers.",
		Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
	s.box = container.NewVBox(s.rows, container.NewBorder(nil, nil, s.add, nil, applies), s.changed, s.note, s.where)
	if h.Session != nil {
		s.status, s.demo = h.Session.LanguageServers, h.Session.Demo
	}
	s.reload("", false)
	return s
}

// reload reads the servers again off the UI goroutine and shows them,
// with msg under them when it is not "" (a danger when failed).
func (s *lspSection) reload(msg string, failed bool) {
	status := s.status
	s.h.Work(func() func() {
		l := readLSPListing(status)
		return func() {
			s.show(l, s.demo)
			s.said(msg, failed)
		}
	})
}

// said shows what the last change did, or hides the line for "".
func (s *lspSection) said(msg string, failed bool) {
	s.changed.Importance = widget.SuccessImportance
	if failed {
		s.changed.Importance = widget.DangerImportance
	}
	s.changed.SetText(msg)
	tw.ShowIf(s.changed, msg != "")
}

// item is the section's row of the settings form.
func (s *lspSection) item() *widget.FormItem {
	return &widget.FormItem{Text: "Language servers", Widget: s.box}
}

// readLSPListing reads the servers' states: from status (the shown
// session's, which never waits) when it reports any, else the
// configuration, each "not started" or, when its command is not found,
// "not installed". It reads files, so it runs off the UI goroutine.
func readLSPListing(status func() []lsp.ServerStatus) lspListing {
	var l lspListing
	path, err := lsp.UserPath()
	if err != nil {
		l.problem = tw.Sentence(err.Error())
	} else {
		l.path = path
	}
	if status != nil {
		if st := status(); len(st) > 0 {
			l.servers, l.live = st, true
		}
	}
	for _, d := range lsp.Defaults() {
		l.configs = append(l.configs, lsp.ConfiguredServer{ServerConfig: d, BuiltIn: true})
	}
	if path != "" {
		c, err := lsp.ListServers(path)
		if err != nil {
			l.problem = tw.Sentence(err.Error()) + " Sessions use the built-in servers until it is fixed."
		} else {
			l.configs, l.readable = c, true
		}
	}
	if l.live {
		return l
	}
	for _, c := range l.configs {
		if c.Disabled {
			continue // listed from the configuration by show
		}
		st := lsp.ServerStatus{Name: c.Name, State: lsp.StateStopped, Command: c.Command, Languages: c.Languages, Extensions: c.Extensions}
		if prog, why := lsp.Find(c.ServerConfig); prog == "" {
			st.State, st.Reason = lsp.StateNotInstalled, why
		}
		l.servers = append(l.servers, st)
	}
	return l
}

// installTimeout bounds an install from Settings.
const installTimeout = 15 * time.Minute

// installButton is Install with the pinned version for a server that is
// not installed and that Tally installs (its command the built-in one),
// nil otherwise.
func (s *lspSection) installButton(st lsp.ServerStatus) *widget.Button {
	it, ok := lsp.LookupInstallable(st.Name)
	if !ok || st.State != lsp.StateNotInstalled || st.Command != it.Command {
		return nil
	}
	b := &widget.Button{Text: "Install " + it.Version(), Icon: theme.DownloadIcon(), Importance: widget.LowImportance}
	b.OnTapped = func() {
		b.Disable()
		s.install(it)
	}
	return b
}

// install installs it off the UI goroutine (see lsp.Install) and shows
// the list again, with what was installed or why it was not.
func (s *lspSection) install(it lsp.Installable) {
	if s.busy {
		return
	}
	s.busy = true
	s.said("Installing "+it.Name+" "+it.Version()+" with "+it.Tool+"…", false)
	status := s.status
	s.h.Work(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
		defer cancel()
		got, err := lsp.Install(ctx, it.Name, lsp.InstallOptions{})
		l := readLSPListing(status)
		return func() {
			s.busy = false
			s.show(l, s.demo)
			if err != nil {
				s.said(tw.Sentence(err.Error()), true)
			} else {
				s.said("Installed "+got.Name+" "+got.Version+" ("+got.Program+"); new sessions use it.", false)
			}
		}
	})
}

// show fills the section with l; demo says the shown session is the demo,
// which runs no server. The configured servers that are disabled follow
// the others, marked so.
func (s *lspSection) show(l lspListing, demo bool) {
	s.rows.Objects = nil
	s.logs = map[string]*widget.Button{}
	s.path, s.conf = "", map[string]lsp.ConfiguredServer{}
	if l.readable {
		s.path = l.path
		for _, c := range l.configs {
			s.conf[c.Name] = c
		}
	}
	if s.path != "" && !s.busy {
		s.add.Enable()
	} else {
		s.add.Disable()
	}
	listed := map[string]bool{}
	for _, st := range l.servers {
		listed[st.Name] = true
		s.rows.Add(s.row(st, false))
	}
	for _, c := range l.configs {
		if c.Disabled && !listed[c.Name] {
			s.rows.Add(s.row(lsp.ServerStatus{Name: c.Name, Command: c.Command, Languages: c.Languages, Extensions: c.Extensions}, true))
		}
	}
	if len(s.rows.Objects) == 0 {
		s.rows.Add(widget.NewLabel("No language server is configured."))
	}
	s.rows.Refresh()
	var note []string
	switch {
	case l.live:
		note = append(note, "States of the servers of the shown session's folder.")
	case demo:
		note = append(note, "The demo runs no language server; these are the configured ones.")
	case s.h.Shown():
		note = append(note, "No server runs for the shown session: none handles its files, or none is installed.")
	}
	s.note.Importance = widget.LowImportance
	if l.problem != "" {
		note = append(note, l.problem)
		s.note.Importance = widget.WarningImportance
	}
	s.note.SetText(strings.Join(note, " "))
	tw.ShowIf(s.note, s.note.Text != "")
	where := "your language-server file"
	if l.path != "" {
		where = l.path
	}
	s.where.SetText("The servers are kept in " + where + ": " + lspShape +
		`. A server named like a built-in one replaces it; "disabled": true turns it off.`)
}

// row is one server: its name, its languages, its state and Open log
// when it has a log on one line, and under them the reason when it is
// not running and the buttons that change it. off says the row is a
// disabled server's, which no session runs.
func (s *lspSection) row(st lsp.ServerStatus, off bool) fyne.CanvasObject {
	state, reason, imp := lspStateText(st)
	if off {
		state, reason, imp = "disabled", "", widget.LowImportance
	}
	name := &widget.Label{Text: st.Name, TextStyle: fyne.TextStyle{Bold: true}}
	what := &widget.Label{Text: lspHandles(st), Importance: widget.LowImportance, Truncation: fyne.TextTruncateEllipsis}
	right := container.NewHBox(&widget.Label{Text: state, Importance: imp})
	if b := s.installButton(st); b != nil && !off {
		right.Add(b)
	}
	if st.LogPath != "" {
		path := st.LogPath
		b := &widget.Button{Text: "Open log", Icon: theme.DocumentIcon(), Importance: widget.LowImportance, OnTapped: func() { s.h.OpenFile(path) }}
		s.logs[st.Name] = b
		right.Add(b)
	}
	if c, ok := s.conf[st.Name]; ok && c.Disabled && !off {
		reason = strings.TrimPrefix(reason+"; ", "; ") + "disabled: new sessions do not run it"
	}
	line := container.NewBorder(nil, nil, name, right, what)
	actions := s.actions(st.Name)
	if reason == "" && actions == nil {
		return line
	}
	var why fyne.CanvasObject
	if reason != "" {
		l := &widget.Label{Text: reason, Wrapping: fyne.TextWrapWord, SizeName: theme.SizeNameCaptionText, Importance: widget.LowImportance}
		if st.State == lsp.StateFailed && !off {
			l.Importance = widget.DangerImportance
		}
		why = l
	}
	if actions == nil {
		return container.NewVBox(line, why)
	}
	return container.NewVBox(line, container.NewBorder(nil, nil, nil, actions, why))
}

// lspHandles says what a server handles: its languages, else its file
// endings.
func lspHandles(st lsp.ServerStatus) string {
	if len(st.Languages) > 0 {
		return strings.Join(st.Languages, ", ")
	}
	return strings.Join(st.Extensions, " ")
}

// lspStateText is a server's state in words, the reason it is not
// running ("" when there is nothing to add) and the importance the state
// is shown with.
func lspStateText(st lsp.ServerStatus) (state, reason string, imp widget.Importance) {
	reason = ServerReason(st)
	switch st.State {
	case lsp.StateRunning:
		return "running", "", widget.SuccessImportance
	case lsp.StateStarting:
		return "starting", "", widget.MediumImportance
	case lsp.StateNotInstalled:
		return "not installed", reason, widget.WarningImportance
	case lsp.StateFailed:
		return "failed", reason, widget.DangerImportance
	}
	// Stopped: the engine's own reason only repeats "not started yet".
	if strings.HasPrefix(reason, "not started yet") {
		reason = ""
	}
	return "not started yet", reason, widget.LowImportance
}

// ServerReason is st's reason as said after its name: without the
// final full stop, and "it" for the engine's opening "the language
// server "name"".
func ServerReason(st lsp.ServerStatus) string {
	r := strings.TrimSuffix(strings.TrimSpace(st.Reason), ".")
	if rest, ok := strings.CutPrefix(r, `the language server "`+st.Name+`" `); ok {
		r = "it " + rest
	}
	return r
}
