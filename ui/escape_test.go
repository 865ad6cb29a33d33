package ui

import (
	"testing"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// pressEscape delivers Escape as the desktop driver does: to the focused
// widget of the top layer, or else to the window.
func pressEscape(h *harness) {
	ev := &fyne.KeyEvent{Name: fyne.KeyEscape}
	c := h.win.Canvas()
	if f := c.Focused(); f != nil {
		f.TypedKey(ev)
		return
	}
	c.OnTypedKey()(ev)
}

// Escape did not close the shortcuts sheet, search or settings, and the
// sheet stayed open under a dialog opened over it.
func TestEscapeClosesDialogs(t *testing.T) {
	h := silentSession(t)
	overlays := func() int { return len(h.win.Canvas().Overlays().List()) }

	h.ui.showShortcuts()
	if overlays() != 1 {
		t.Fatal("the shortcuts sheet did not open")
	}
	pressEscape(h)
	if overlays() != 0 {
		t.Error("Escape did not close the shortcuts sheet")
	}

	h.ui.showSearch()
	if _, ok := h.win.Canvas().Focused().(*tw.EscEntry); !ok {
		t.Fatalf("the search field does not have the focus (%T)", h.win.Canvas().Focused())
	}
	pressEscape(h)
	if overlays() != 0 {
		t.Error("Escape in the search field did not close search")
	}

	h.ui.openSettings().Focus(settings.Model)
	pressEscape(h)
	if overlays() != 0 {
		t.Error("Escape in a settings field did not close the settings")
	}
	h.ui.openSettings()
	pressEscape(h)
	if overlays() != 0 {
		t.Error("Escape did not close the settings")
	}

	h.ui.showShortcuts()
	h.ui.showSearch()
	if n := overlays(); n != 1 {
		t.Errorf("%d dialogs open after search was opened over the sheet; the sheet stayed under it", n)
	}
	h.ui.showSettings()
	if n := overlays(); n != 1 {
		t.Errorf("%d dialogs open after settings was opened over search", n)
	}
	pressEscape(h)
	if overlays() != 0 {
		t.Error("Escape left a dialog open")
	}
}

// Escape did not close Rename while its title field had the focus.
func TestEscapeInRenameClosesIt(t *testing.T) {
	h := silentSession(t)
	h.ui.sessions.showRename()
	if _, ok := h.win.Canvas().Focused().(*tw.EscEntry); !ok {
		t.Fatalf("the title field does not have the focus (%T)", h.win.Canvas().Focused())
	}
	pressEscape(h)
	if n := len(h.win.Canvas().Overlays().List()); n != 0 {
		t.Errorf("%d dialogs open after Escape in the rename field", n)
	}
}
