package rewind

import (
	"errors"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Changes is the content of the Changes dialog: every file the session
// changed, with its diff, its language servers' errors and warnings, and
// Revert.
type Changes struct {
	widget.BaseWidget

	changes []filehistory.FileChange
	revert  map[string]*widget.Button
	all     *widget.Button
	diags   *changeDiagnostics // the language servers' errors and warnings (diagnostics.go)
	folds   []*Fold            // each file's diff, in the order of changes
	body    fyne.CanvasObject
	dlg     *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *Changes) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.body) }

// openDiffs is how many files' diffs the Changes view shows unfolded,
// from the first; the others are a click away.
const openDiffs = 5

// Changes lists every file the shown session changed, with its diff
// against the session's first checkpoint.
func (vs *Views) Changes() {
	s := vs.h.Current()
	if s == nil || s.Engine() == nil {
		return
	}
	readThen(vs, s, "Could not read the session's changes: ", s.Engine().Files().Changes,
		func(changes []filehistory.FileChange) { vs.openChanges(s, changes) })
}

func (vs *Views) openChanges(s Session, changes []filehistory.FileChange) {
	v := &Changes{changes: changes, revert: map[string]*widget.Button{}, diags: newChangeDiagnostics()}
	list := container.NewVBox()
	if len(changes) == 0 {
		list.Add(widget.NewLabel("The agent has not changed any file in this session (or every change was reverted)."))
	}
	for i, c := range changes {
		path := c.Path
		b := &widget.Button{Text: "Revert", Icon: theme.ContentUndoIcon(), OnTapped: func() { vs.revert(s, v, path, false) }}
		if !c.Restorable {
			b.Disable()
		}
		v.revert[path] = b
		head := container.NewBorder(nil, nil, nil, container.NewHBox(v.diags.badge(path), b), &widget.Label{Text: path, TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis})
		var body fyne.CanvasObject
		if c.Restorable {
			d := c.Diff
			body = tw.DiffView(&d, nil, nil)
		} else {
			body = &widget.Label{Text: "Not restorable: " + c.Why, Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance}
		}
		fold := NewFold("Diff since the session began", body, i < openDiffs)
		v.folds = append(v.folds, fold)
		list.Add(container.NewVBox(head, fold, v.diags.list(path)))
	}
	v.all = &widget.Button{Text: "Revert all", Icon: theme.ContentUndoIcon(), Importance: widget.DangerImportance, OnTapped: func() {
		dialog.ShowConfirm("Revert all", fmt.Sprintf("Put %s back as they were when the session began? The conversation stays as it is.",
			text.Plural(len(changes), "file")), func(ok bool) {
			if ok {
				vs.revert(s, v, "", false)
			}
		}, vs.h.Window)
	}}
	if len(changes) == 0 {
		v.all.Disable()
	}
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance,
		Text: "Every file the agent changed in this session, by its own edits or by commands, against its state when the session began. Files it never touched are never written."}
	v.body = container.NewBorder(note, nil, nil, nil, container.NewVScroll(list))
	v.ExtendBaseWidget(v)
	win := vs.h.Window
	v.dlg = dialog.NewCustomWithoutButtons("Changes", v, win)
	merge := s.Merge()
	v.dlg.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Close", OnTapped: func() { v.dlg.Hide() }}, merge, v.all})
	v.dlg.Resize(fyne.NewSize(min(860, win.Canvas().Size().Width-40), min(600, win.Canvas().Size().Height-40)))
	v.dlg.Show()
	vs.fetchDiagnostics(s, v)
}

// revert reverts one file (path) or all ("") off the UI goroutine,
// asking before overwriting outside changes, then replaces the Changes
// view v with a fresh one.
func (vs *Views) revert(s Session, v *Changes, path string, force bool) {
	if s.Running() {
		vs.h.Info("A turn is running; revert when it has finished (or press Stop).")
		return
	}
	sess := s.Engine()
	vs.h.Work(func() func() {
		var res filehistory.Result
		var err error
		if path == "" {
			res, err = sess.Files().RevertAll(force)
		} else {
			res, err = sess.Files().Revert(path, force)
		}
		return func() {
			switch {
			case errors.Is(err, workbench.ErrConflict):
				vs.confirmOverwrite(err, func() { vs.revert(s, v, path, true) })
				return
			case err != nil:
				vs.h.Error("Could not revert: " + err.Error())
				return
			}
			vs.h.Info(fmt.Sprintf("Reverted %s.", text.Plural(len(res.Restored), "file")))
			v.dlg.Hide()
			if s.Shown() {
				vs.Changes()
			}
		}
	})
}
