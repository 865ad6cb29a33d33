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
	worktree  *widget.Check   // in a git worktree of its own
	endpoint  *widget.Select  // the endpoint profile, when there are profiles
	problem   *tw.ProblemLine // why the folder cannot be used
	dlg       *dialog.CustomDialog
}

// showNew opens the New session dialog.
func (v *sessionsView) showNew() {
	u := v.u
	f := &newSessionForm{ws: tw.NewEscEntry(), title: tw.NewEscEntry()}
	f.ws.SetPlaceHolder("/path/to/project")
	f.ws.SetText(u.lastWorkspace())
	f.title.SetPlaceHolder("optional; named after your first prompt")
	f.problem = tw.NewProblemLine(3)
	submit := func() {
		ws, problem := u.checkWorkspace(f.ws.Text)
		if problem != "" {
			f.problem.Say(problem)
			u.win.Canvas().Focus(f.ws)
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
		u.createSessionIn(ws, f.title.Text, f.worktree.Checked, profile)
	}
	f.ws.OnSubmitted = func(string) { submit() }
	f.title.OnSubmitted = func(string) { submit() }
	f.ws.OnChanged = func(string) { f.problem.Clear() }
	browse := &widget.Button{Text: "Choose…", Icon: theme.FolderOpenIcon(), OnTapped: func() {
		d := dialog.NewFolderOpen(func(lu fyne.ListableURI, err error) {
			if err == nil && lu != nil {
				f.ws.SetText(lu.Path())
			}
		}, u.win)
		if start := pickerStart(f.ws.Text); start != nil {
			d.SetLocation(start)
		}
		d.Show()
	}}
	hint := &widget.Label{Text: "The folder the agent may read and change.", Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
	f.worktree = widget.NewCheck("In a git worktree of its own (branch tally/<session>)", nil)
	form := widget.NewForm(
		&widget.FormItem{Text: "Workspace", Widget: container.NewVBox(container.NewBorder(nil, nil, nil, browse, f.ws), hint)},
		&widget.FormItem{Text: "Title", Widget: f.title},
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
	f.dlg.Resize(fyne.NewSize(min(600, u.win.Canvas().Size().Width-40), 320))
	f.dlg.Show()
	u.win.Canvas().Focus(f.ws)
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
	ws = strings.TrimSpace(typed)
	if strings.HasPrefix(ws, "~") {
		if home, err := os.UserHomeDir(); err == nil {
			ws = filepath.Join(home, strings.TrimPrefix(ws, "~"))
		}
	}
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
