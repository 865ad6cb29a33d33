package settings

import (
	"encoding/json"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Settings → Language servers changes the user's lsp.json: Add server…
// and each row's Edit… open a small form (the problem is said under it,
// which stays open until the server is saved; Enter saves), Disable or
// Enable marks the server, Remove drops a user server and Use built-in
// drops a built-in server's override. Each change is written at once,
// off the UI goroutine, and the list is read again.

// lspServerForm is the Add or Edit server dialog.
type lspServerForm struct {
	s                                     *lspSection
	editing                               bool
	name, command, args, exts, langs, opt *tw.EscEntry
	env                                   []string // kept from the edited server
	saving                                bool
	*editDialog
}

// actions are the buttons of the configured server name's row, or nil
// when it is not configured (a session's own server) or the file cannot
// be changed.
func (s *lspSection) actions(name string) fyne.CanvasObject {
	c, ok := s.conf[name]
	if !ok || s.path == "" {
		return nil
	}
	btn := func(text string, icon fyne.Resource, tap func()) *widget.Button {
		return &widget.Button{Text: text, Icon: icon, Importance: widget.LowImportance, OnTapped: tap}
	}
	box := container.NewHBox(btn("Edit…", theme.DocumentCreateIcon(), func() { s.showServerForm(&c) }))
	if c.Disabled {
		box.Add(btn("Enable", theme.ConfirmIcon(), func() {
			s.change(func(path string) error { return lsp.DisableServer(path, name, false) }, "Enabled "+name+".")
		}))
	} else {
		box.Add(btn("Disable", theme.CancelIcon(), func() {
			s.change(func(path string) error { return lsp.DisableServer(path, name, true) }, "Disabled "+name+".")
		}))
	}
	switch {
	case !c.BuiltIn:
		box.Add(btn("Remove", theme.DeleteIcon(), func() {
			s.change(func(path string) error { return lsp.RemoveServer(path, name) }, "Removed "+name+".")
		}))
	case c.InFile:
		box.Add(btn("Use built-in", theme.ViewRestoreIcon(), func() {
			s.change(func(path string) error { return lsp.RemoveServer(path, name) }, name+" is the built-in server again.")
		}))
	}
	return box
}

// change runs edit on the user's file off the UI goroutine and shows the
// list again, with done or the error under it.
func (s *lspSection) change(edit func(path string) error, done string) {
	if s.busy || s.path == "" {
		return
	}
	s.busy = true
	path, status := s.path, s.status
	s.h.Work(func() func() {
		err := edit(path)
		l := readLSPListing(status)
		return func() {
			s.busy = false
			s.show(l, s.demo)
			if err != nil {
				s.said(tw.Sentence(err.Error()), true)
			} else {
				s.said(done, false)
			}
		}
	})
}

// showServerForm opens the form for a new server (c nil) or for editing
// c, and returns it.
func (s *lspSection) showServerForm(c *lsp.ConfiguredServer) *lspServerForm {
	f := &lspServerForm{s: s, editing: c != nil}
	entry := func(ph string) *tw.EscEntry {
		return formEntry(ph, func() { f.submit() })
	}
	f.name = entry("zls")
	f.command = entry("zls, or /path/to/server")
	f.args = entry("--stdio (separated by spaces)")
	f.exts = entry(".zig, .zon")
	f.langs = entry("zig (optional)")
	f.opt = entry(`{"key": "value"} (optional)`)
	title := "Add language server"
	if c != nil {
		title = "Edit " + c.Name
		f.name.SetText(c.Name)
		f.name.Disable()
		f.command.SetText(c.Command)
		f.args.SetText(strings.Join(c.Args, " "))
		f.exts.SetText(strings.Join(c.Extensions, ", "))
		f.langs.SetText(strings.Join(c.Languages, ", "))
		f.opt.SetText(string(c.InitOptions))
		f.env = c.Env
		if c.BuiltIn && !c.InFile {
			title = "Override the built-in " + c.Name
		}
	}
	f.editDialog = newEditDialog(s.h.Window, title, "Save", []*widget.FormItem{
		{Text: "Name", Widget: f.name, HintText: "letters, digits, '.', '_' and '-'; a built-in server's name replaces it"},
		{Text: "Command", Widget: f.command},
		{Text: "Arguments", Widget: f.args},
		{Text: "Extensions", Widget: f.exts, HintText: "the file endings it handles, separated by commas"},
		{Text: "Languages", Widget: f.langs, HintText: "LSP language identifiers, separated by commas"},
		{Text: "Init options", Widget: f.opt, HintText: "JSON sent as the initialize request's initializationOptions"},
	}, 420, f.submit)
	if c != nil {
		s.h.Window.Canvas().Focus(f.command)
	} else {
		s.h.Window.Canvas().Focus(f.name)
	}
	return f
}

// config is the server the form describes.
func (f *lspServerForm) config() (string, lsp.ServerConfig) {
	name := strings.TrimSpace(f.name.Text)
	sc := lsp.ServerConfig{Name: name, Command: strings.TrimSpace(f.command.Text), Args: strings.Fields(f.args.Text),
		Extensions: commaList(f.exts.Text), Languages: commaList(f.langs.Text), Env: f.env}
	if opt := strings.TrimSpace(f.opt.Text); opt != "" {
		sc.InitOptions = json.RawMessage(opt)
	}
	return name, sc
}

// commaList splits a comma-separated field into its non-empty items.
func commaList(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// submit checks the form, saying what is wrong under it, and saves the
// server off the UI goroutine; the dialog closes once it is saved.
func (f *lspServerForm) submit() {
	if f.saving {
		return
	}
	name, sc := f.config()
	err := lsp.CheckServer(name, sc)
	if c, ok := f.s.conf[name]; err == nil && !f.editing && ok && c.InFile {
		f.fail("A server named " + name + " is already configured; edit it in the list, or choose another name.")
		return
	}
	if err != nil {
		f.fail(tw.Sentence(err.Error()))
		return
	}
	s := f.s
	if s.path == "" {
		f.fail("The language-server file's place is unknown; set XDG_CONFIG_HOME and reopen Settings.")
		return
	}
	f.saving = true
	f.save.Disable()
	path, status := s.path, s.status
	s.h.Work(func() func() {
		err := lsp.SaveServer(path, name, sc)
		var l lspListing
		if err == nil {
			l = readLSPListing(status)
		}
		return func() {
			f.saving = false
			f.save.Enable()
			if err != nil {
				f.fail(tw.Sentence(err.Error()))
				return
			}
			f.dlg.Hide()
			s.show(l, s.demo)
			s.said("Saved "+name+".", false)
		}
	})
}
