package settings

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	tw "github.com/tally-dev/tally/ui/widget"
)

// editDialog is the small edit dialog of Settings' lists (language
// servers, endpoint profiles): the form's items with their hints wrapped,
// the problem label under them, and Cancel and a save button that runs
// submit (the dialog stays open until the caller hides it).
type editDialog struct {
	dlg     *dialog.CustomDialog
	save    *widget.Button
	problem *tw.ProblemLine
}

// newEditDialog shows an editDialog titled title in win, height tall at
// the most. Typing in one of its entries clears the problem said; the
// problem's line keeps its room, so the fields never move.
func newEditDialog(win fyne.Window, title, saveText string, items []*widget.FormItem, height float32, submit func()) *editDialog {
	d := &editDialog{problem: tw.NewProblemLine(2)}
	for _, it := range items {
		if e, ok := it.Widget.(*tw.EscEntry); ok {
			e.OnChanged = func(string) { d.problem.Clear() }
		}
		wrapHint(it)
	}
	d.save = &widget.Button{Text: saveText, Importance: widget.HighImportance, OnTapped: submit}
	cancel := &widget.Button{Text: "Cancel", OnTapped: func() { d.dlg.Hide() }}
	d.dlg = dialog.NewCustomWithoutButtons(title, container.NewVBox(widget.NewForm(items...), d.problem), win)
	d.dlg.SetButtons([]fyne.CanvasObject{cancel, d.save})
	d.dlg.Resize(fyne.NewSize(min(560, win.Canvas().Size().Width-40), height))
	d.dlg.Show()
	return d
}

// formEntry is an entry of such a dialog: Enter submits.
func formEntry(placeholder string, submit func()) *tw.EscEntry {
	e := tw.NewEscEntry()
	e.SetPlaceHolder(placeholder)
	e.OnSubmitted = func(string) { submit() }
	return e
}

// fail says msg under the form and keeps the dialog open.
func (d *editDialog) fail(msg string) {
	d.problem.Say(msg)
}
