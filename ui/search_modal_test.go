package ui

import (
	"testing"

	"fyne.io/fyne/v2/widget"
)

// TestSearchDoesNotOpenOverAnotherDialog: with a session's dialog open
// (its archive, say), Ctrl+K opens no search over it, so no hit of
// another session can be opened under the first session's dialog.
func TestSearchDoesNotOpenOverAnotherDialog(t *testing.T) {
	h := silentSession(t)
	over := widget.NewModalPopUp(widget.NewLabel("Archive of session A"), h.win.Canvas())
	over.Show()
	h.q.drain()
	h.ui.showSearch()
	h.q.drain()
	if n := len(h.win.Canvas().Overlays().List()); n != 1 {
		t.Fatalf("%d overlays after Ctrl+K over a dialog, want the dialog alone", n)
	}
	over.Hide()
	h.ui.showSearch()
	h.q.drain()
	if h.win.Canvas().Overlays().Top() == nil {
		t.Fatal("Ctrl+K with no dialog open shows no search")
	}
}
