package ui

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// settingsDialog is the shown Settings dialog, read and filled the way a
// person would: its fields are found by the labels of the rows, showing
// the section of the dialog that holds them.
type settingsDialog struct {
	h *harness
	t testing.TB
}

// openSettingsDialog opens Settings and returns its dialog.
func openSettingsDialog(h *harness) settingsDialog {
	h.t.Helper()
	f := h.ui.openSettings()
	if f == nil {
		h.t.Fatal("Settings did not open")
	}
	if fynetest.Find[*widget.Form](f, nil) == nil {
		h.t.Fatal("the Settings dialog has no form")
	}
	return settingsDialog{h: h, t: h.t}
}

// row is the widget of the row labelled label, whose section it shows
// by tapping the section's name in the list on the dialog's left.
func (d settingsDialog) row(label string) fyne.CanvasObject {
	d.t.Helper()
	top := d.h.win.Canvas().Overlays().Top()
	for _, name := range settings.Sections() {
		if b := buttonIn(top, name); b != nil {
			test.Tap(b)
		}
		var found *widget.FormItem
		fynetest.Find(top, func(f *widget.Form) bool {
			for _, it := range f.Items {
				if it.Text == label {
					found = it
				}
			}
			return found != nil
		})
		if found != nil {
			return found.Widget
		}
	}
	d.t.Fatalf("the settings have no row %q", label)
	return nil
}

// entries are the text fields of the row labelled label, in order.
func (d settingsDialog) entries(label string) []*widget.Entry {
	var out []*widget.Entry
	fynetest.Walk(d.row(label), func(o fyne.CanvasObject) bool {
		switch e := o.(type) {
		case *tw.EscEntry:
			out = append(out, &e.Entry)
			return false
		case *widget.Entry:
			out = append(out, e)
			return false
		}
		return true
	})
	return out
}

// entry is the first text field of the row labelled label.
func (d settingsDialog) entry(label string) *widget.Entry {
	d.t.Helper()
	if es := d.entries(label); len(es) > 0 {
		return es[0]
	}
	d.t.Fatalf("the row %q has no text field", label)
	return nil
}

// sel is the first choice of the row labelled label.
func (d settingsDialog) sel(label string) *widget.Select {
	d.t.Helper()
	s := fynetest.Find[*widget.Select](d.row(label), nil)
	if s == nil {
		d.t.Fatalf("the row %q has no choice", label)
	}
	return s
}

// check is the first checkbox of the row labelled label.
func (d settingsDialog) check(label string) *widget.Check {
	d.t.Helper()
	c := fynetest.Find[*widget.Check](d.row(label), nil)
	if c == nil {
		d.t.Fatalf("the row %q has no checkbox", label)
	}
	return c
}

// focusedOnKey reports whether the keyboard focus is in the API key's
// field, the dialog's only password entry.
func focusedOnKey(h *harness) bool {
	e, ok := h.win.Canvas().Focused().(*widget.Entry)
	return ok && e.Password
}

// profileChoice is the endpoint choice next to the label label in the
// Endpoint profiles row: the one new sessions start on, or a role's.
func (d settingsDialog) profileChoice(label string) *widget.Select {
	d.t.Helper()
	for _, o := range besideLabel(d.row("Endpoint profiles"), label) {
		if s := fynetest.Find[*widget.Select](o, nil); s != nil {
			return s
		}
	}
	d.t.Fatalf("no endpoint choice next to %q", label)
	return nil
}

// roleModel is the model field of the role labelled label.
func (d settingsDialog) roleModel(label string) *tw.EscEntry {
	d.t.Helper()
	for _, o := range besideLabel(d.row("Endpoint profiles"), label) {
		if e := fynetest.Find[*tw.EscEntry](o, nil); e != nil {
			return e
		}
	}
	d.t.Fatalf("no model field next to %q", label)
	return nil
}

// besideLabel returns what shares a container with the label showing
// text under o: the objects after it first (a form layout's field
// follows its label), then those before it.
func besideLabel(o fyne.CanvasObject, text string) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		box, ok := c.(*fyne.Container)
		if !ok || out != nil {
			return out == nil
		}
		i := slices.IndexFunc(box.Objects, func(x fyne.CanvasObject) bool {
			l, ok := x.(*widget.Label)
			return ok && l.Text == text
		})
		if i < 0 {
			return true
		}
		out = append(slices.Clone(box.Objects[i+1:]), box.Objects[:i]...)
		return false
	})
	return out
}

// countButtons counts the buttons labelled text under o.
func countButtons(o fyne.CanvasObject, text string) int {
	n := 0
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if b, ok := c.(*widget.Button); ok && b.Text == text {
			n++
		}
		return true
	})
	return n
}

// lspRows is the Language servers section's list of servers, one row
// each (the section's first part).
func (d settingsDialog) lspRows() *fyne.Container {
	return d.row("Language servers").(*fyne.Container).Objects[0].(*fyne.Container)
}

// save taps Save and reports whether the dialog accepted the fields
// (it closes then).
func (d settingsDialog) save() bool {
	d.t.Helper()
	top := d.h.win.Canvas().Overlays().Top()
	test.Tap(buttonIn(top, "Save"))
	_, open := shown[*settings.Form](d.h)
	return !open
}

// says reports whether the topmost dialog shows s (what Save refused,
// what a profile's form did).
func (d settingsDialog) says(s string) bool {
	return d.h.overlayShows(s)
}
