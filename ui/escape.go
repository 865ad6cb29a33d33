package ui

import (
	"fyne.io/fyne/v2/dialog"

	tw "github.com/tally-dev/tally/ui/widget"
)

// Escape closes the topmost dialog as its Cancel or Close button would
// (see widget.DismissTop). The window's views — the shortcuts sheet,
// search and settings — replace each other instead of piling up, so a
// sheet never stays open under another dialog.

// onEscape is the window's handler for Escape while no field has the
// focus.
func (u *UI) onEscape() { tw.DismissTop(u.win.Canvas()) }

// showView shows d, one of the window's views (the shortcuts sheet,
// search, settings), closing the one shown before.
func (u *UI) showView(d dialog.Dialog) {
	if prev := u.view; prev != nil {
		u.view = nil
		prev.Hide()
	}
	u.view = d
	d.SetOnClosed(func() {
		if u.view == d {
			u.view = nil
		}
	})
	d.Show()
}
