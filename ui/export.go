package ui

import (
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/workbench"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Export… in the sessions list writes the selected session as a document
// to share (Markdown or HTML, redacted again) or as the JSON lines `tally
// export` prints, to a file the user names.

// exportFormats are the choices of the export dialog, by label.
var exportFormats = map[string]string{
	"Markdown (.md)":      workbench.FormatMarkdown,
	"HTML page (.html)":   workbench.FormatHTML,
	"JSON lines (.jsonl)": workbench.FormatJSONL,
}

// exportDialog is the shown export dialog, for tests.
type exportDialog struct {
	format *widget.Select
	path   *tw.EscEntry
	dlg    *dialog.CustomDialog
}

// showExport asks where to export the selected session, and how.
func (v *sessionsView) showExport() {
	info, ok := v.selected()
	if !ok {
		return
	}
	u := v.u
	home, _ := os.UserHomeDir()
	base := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < ' ' {
			return '-'
		}
		return r
	}, info.Title)
	if base == "" {
		base = info.ID
	}
	e := &exportDialog{path: tw.NewEscEntry()}
	e.path.SetText(filepath.Join(home, base+".md"))
	e.format = widget.NewSelect([]string{"Markdown (.md)", "HTML page (.html)", "JSON lines (.jsonl)"}, func(label string) {
		f := exportFormats[label]
		p := e.path.Text
		e.path.SetText(strings.TrimSuffix(p, filepath.Ext(p)) + "." + f)
	})
	e.format.SetSelectedIndex(0)
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Text: "Prompts, answers and tool calls with their results, edits as diffs, " +
		"compactions and cycles marked. Secrets are redacted again on the way out."}
	form := widget.NewForm(widget.NewFormItem("Format", e.format), widget.NewFormItem("File", e.path))
	e.dlg = dialog.NewCustom("Export "+info.Title, "Cancel", container.NewVBox(note, form), u.win)
	wb, id := u.wb, info.ID
	e.dlg.SetButtons([]fyne.CanvasObject{
		&widget.Button{Text: "Cancel", OnTapped: e.dlg.Hide},
		&widget.Button{Text: "Export", Importance: widget.HighImportance, OnTapped: func() {
			path, format := strings.TrimSpace(e.path.Text), exportFormats[e.format.Selected]
			e.dlg.Hide()
			u.bridge.Work(func() func() {
				err := exportTo(wb, id, format, path)
				return func() {
					if err != nil {
						u.banner.ShowError("Could not export the session: " + err.Error())
						return
					}
					u.banner.ShowInfo("Exported to " + path + ".")
				}
			})
		}},
	})
	e.dlg.Resize(fyne.NewSize(min(640, u.win.Canvas().Size().Width-40), 0))
	u.exporting = e
	e.dlg.Show()
}

// exportTo writes session id in format to the file path, replacing it
// only once the export is whole.
func exportTo(wb *workbench.Workbench, id, format, path string) error {
	if path == "" {
		return os.ErrInvalid
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tally-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := wb.ExportDocument(id, format, tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
