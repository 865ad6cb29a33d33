package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// Renaming the open session used to drop the workspace from the header,
// and Enter in the title field did nothing.
func TestRenameWithEnterKeepsTheWorkspaceInTheHeader(t *testing.T) {
	h := newHarness(t, map[string]string{})
	ws := h.newSession()
	h.ui.sessions.selectID(h.ui.live.id)
	h.ui.sessions.showRename()
	if h.ui.renameDlg == nil {
		t.Fatal("no rename dialog")
	}
	var entry *widget.Entry
	for _, o := range h.ui.win.Canvas().Overlays().List() {
		walkTree(o, func(c fyne.CanvasObject) bool {
			if e, ok := c.(*widget.Entry); ok && entry == nil {
				entry = e
			}
			return true
		})
	}
	if entry == nil {
		t.Fatal("the rename dialog has no title field")
	}
	entry.SetText("renamed by Enter")
	entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the rename", func() bool { return strings.HasPrefix(h.ui.title.Text, "renamed by Enter") })
	if !strings.Contains(h.ui.title.Text, ws) {
		t.Errorf("header %q lost the workspace %q", h.ui.title.Text, ws)
	}
}
