package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The New session dialog: a workspace folder (typed, or chosen in a folder
// dialog; it starts at the last session's folder) and an optional title.
// Enter creates; a folder that cannot be used keeps the dialog open with
// the reason under the fields, in a line whose room is kept so that they
// never move.

// newSessionForm is the New session dialog's state.
type newSessionForm struct {
	ws, title *tw.EscEntry
	dirs      *tw.EscEntry    // further folders, separated by commas
	worktree  *widget.Check   // in a git worktree of its own
	endpoint  *widget.Select  // the endpoint profile, when there are profiles
	problem   *tw.ProblemLine // why the folder cannot be used
	dlg       *dialog.CustomDialog
}

// showNew opens the New session dialog.
func (v *sessionsView) showNew() {
	u := v.u
	f := &newSessionForm{ws: tw.NewEscEntry(), title: tw.NewEscEntry(), dirs: tw.NewEscEntry()}
	f.ws.SetPlaceHolder("/path/to/project")
	f.ws.SetText(u.lastWorkspace())
	f.title.SetPlaceHolder("optional; named after your first prompt")
	f.dirs.SetPlaceHolder("optional; e.g. ../shared-lib, ~/src/docs")
	f.problem = tw.NewProblemLine(3)
	submit := func() {
		ws, problem := u.checkWorkspace(f.ws.Text)
		at := f.ws // the field at fault
		var roots []string
		if problem == "" {
			roots, problem = u.checkRoots(ws, f.dirs.Text)
			at = f.dirs
		}
		if problem != "" {
			f.problem.Say(problem)
			u.win.Canvas().Focus(at)
			return
		}
		f.dlg.Hide()
		profile := ""
		if f.endpoint != nil {
			profile = orChoice(f.endpoint.Selected, settings.MainChoice)
			if profile == settings.MainChoice {
				profile = workbench.MainProfile
			}
		}
		u.createSessionIn(ws, f.title.Text, f.worktree.Checked, profile, roots)
	}
	for _, e := range []*tw.EscEntry{f.ws, f.title, f.dirs} {
		e.OnSubmitted = func(string) { submit() }
	}
	f.ws.OnChanged = func(string) { f.problem.Clear() }
	f.dirs.OnChanged = func(string) { f.problem.Clear() }
	browse := &widget.Button{Text: "Choose…", Icon: theme.FolderOpenIcon(), OnTapped: func() {
		u.pickFolder(f.ws.Text, f.ws.SetText)
	}}
	addDir := &widget.Button{Text: "Add…", Icon: theme.FolderOpenIcon(), OnTapped: func() {
		u.pickFolder(f.ws.Text, func(dir string) {
			f.dirs.SetText(strings.TrimPrefix(strings.TrimSpace(f.dirs.Text)+", "+dir, ", "))
		})
	}}
	hint := &widget.Label{Text: "The folder the agent may read and change.", Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
	f.worktree = widget.NewCheck("In a git worktree of its own (branch tally/<session>)", nil)
	form := widget.NewForm(
		&widget.FormItem{Text: "Workspace", Widget: container.NewVBox(container.NewBorder(nil, nil, nil, browse, f.ws), hint)},
		&widget.FormItem{Text: "Title", Widget: f.title},
		&widget.FormItem{Text: "More folders", Widget: container.NewBorder(nil, nil, nil, addDir, f.dirs)},
		&widget.FormItem{Text: "", Widget: f.worktree},
	)
	if names := u.settings.ProfileNames(); len(names) > 0 {
		// With endpoint profiles saved, the session's endpoint is chosen here
		// (Settings' default first); it can be switched later with /model.
		f.endpoint = widget.NewSelect(append([]string{settings.MainChoice}, names...), nil)
		f.endpoint.SetSelected(orChoice(u.settings.Profile, settings.MainChoice))
		form.AppendItem(&widget.FormItem{Text: "Endpoint", Widget: f.endpoint})
	}
	create := &widget.Button{Text: "Create", Importance: widget.HighImportance, OnTapped: submit}
	cancel := &widget.Button{Text: "Cancel", OnTapped: func() { f.dlg.Hide() }}
	f.dlg = dialog.NewCustomWithoutButtons("New session", container.NewVBox(form, f.problem), u.win)
	f.dlg.SetButtons([]fyne.CanvasObject{cancel, create})
	f.dlg.Resize(fyne.NewSize(min(600, u.win.Canvas().Size().Width-40), 370))
	f.dlg.Show()
	u.win.Canvas().Focus(f.ws)
}

// pickFolder shows the folder dialog, starting near start, and hands the
// folder chosen to then.
func (u *UI) pickFolder(start string, then func(dir string)) {
	d := dialog.NewFolderOpen(func(lu fyne.ListableURI, err error) {
		if err == nil && lu != nil {
			then(lu.Path())
		}
	}, u.win)
	if at := pickerStart(start); at != nil {
		d.SetLocation(at)
	}
	d.Show()
}

// checkRoots expands the typed further folders of a session in ws
// (comma-separated; "~" is the home folder, a relative path is taken
// from ws) and checks them by the engine's rule. problem says in a
// sentence why they cannot be used.
func (u *UI) checkRoots(ws, typed string) (roots []string, problem string) {
	var dirs []string
	for d := range strings.SplitSeq(typed, ",") {
		if d = expandHome(strings.TrimSpace(d)); d != "" {
			if !filepath.IsAbs(d) {
				d = filepath.Join(ws, d)
			}
			dirs = append(dirs, d)
		}
	}
	roots, err := agent.CheckRoots(ws, dirs, filepath.Dir(u.wb.Path()))
	if err != nil {
		return nil, "Could not create the session: " + err.Error()
	}
	return roots, ""
}

// expandHome replaces a leading "~" of a typed path with the home folder.
func expandHome(p string) string {
	if strings.HasPrefix(p, "~") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// lastWorkspace is where a new session starts: the open session's folder,
// else the folder of the session used last, else the app's working
// directory.
func (u *UI) lastWorkspace() string {
	if u.live != nil && u.live.info.workspace != "" {
		return u.live.info.workspace
	}
	if items := u.sessions.items; len(items) > 0 {
		return items[0].Workspace // the list is newest activity first
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return ""
}

// checkWorkspace expands a typed workspace folder and checks that a
// session can use it: an existing folder, and by the engine's rule never
// the home folder, a parent of it or the data directory. problem says in a
// sentence why it cannot be used.
func (u *UI) checkWorkspace(typed string) (ws, problem string) {
	ws = expandHome(strings.TrimSpace(typed))
	if ws == "" {
		return "", "Type or choose the path of your project folder."
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", fmt.Sprintf("The workspace %q is not an existing folder; choose or type the path of your project folder.", ws)
	}
	if _, err := agent.CheckWorkspace(ws, filepath.Dir(u.wb.Path())); err != nil {
		return "", "Could not create the session: " + err.Error()
	}
	return ws, ""
}
