package ui

import (
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// A folder that cannot be used was said under the workspace field, which
// pushed the title field down; typing hid it and pulled the title back
// up, so a click aimed at the title landed elsewhere.
func TestNewSessionDialogFieldsStayPut(t *testing.T) {
	h := silentSession(t)
	h.ui.sessions.showNew()
	ws, title := entryWith(h, "/path/to/project"), entryWith(h, "optional; named after your first prompt")
	at := func() fyne.Position {
		for _, o := range h.win.Canvas().Overlays().List() {
			fynetest.LayoutAll(o)
		}
		return fyne.CurrentApp().Driver().AbsolutePositionForObject(title)
	}
	before := at()
	ws.SetText(filepath.Join(h.dir, "not-yet"))
	ws.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !h.overlayShows("is not an existing folder") {
		t.Fatal("the dialog does not say the folder is missing")
	}
	if got := at(); got != before {
		t.Errorf("the problem moved the title field from %v to %v", before, got)
	}
	ws.SetText(h.dir)
	if got := at(); got != before || h.overlayShows("is not an existing folder") {
		t.Errorf("clearing the problem moved the title field from %v to %v", before, got)
	}
}
