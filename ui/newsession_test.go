package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// entryWith finds the shown text field whose placeholder is ph.
func entryWith(h *harness, ph string) *tw.EscEntry {
	var found *tw.EscEntry
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetest.Walk(o, func(c fyne.CanvasObject) bool {
			if e, ok := c.(*tw.EscEntry); ok && e.PlaceHolder == ph {
				found = e
			}
			return found == nil
		})
	}
	return found
}

// The New session dialog closed on a missing folder (everything typed was
// lost), Enter did nothing, and the folder started at the app's working
// directory instead of the last session's.
func TestNewSessionDialogKeepsItsFieldsAndSubmitsOnEnter(t *testing.T) {
	h := silentSession(t)
	last := h.ui.live.info.workspace
	h.ui.sessions.showNew()
	ws := entryWith(h, "/path/to/project")
	title := entryWith(h, "optional; named after your first prompt")
	if ws == nil || title == nil {
		t.Fatal("the New session dialog has no workspace or title field")
	}
	if ws.Text != last {
		t.Errorf("the workspace starts at %q; want the last session's %q", ws.Text, last)
	}
	missing := filepath.Join(h.dir, "not-yet")
	ws.SetText(missing)
	test.Type(title, "keep me")
	title.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.win.Canvas().Overlays().Top() == nil {
		t.Fatal("a missing folder closed the dialog")
	}
	if !h.overlayShows("is not an existing folder") {
		t.Error("the dialog does not say the folder is missing")
	}
	if ws.Text != missing || title.Text != "keep me" {
		t.Errorf("the fields were lost: %q, %q", ws.Text, title.Text)
	}
	if err := os.MkdirAll(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	before := h.ui.live
	ws.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.win.Canvas().Overlays().Top() != nil {
		t.Fatal("Enter did not create the session")
	}
	h.waitFor("the new session", func() bool {
		return h.ui.live != before && h.ui.live != nil && h.ui.live.sess != nil && h.ui.live.info.workspace == missing
	})
}

// The New session dialog takes further folders: one the engine's rule
// refuses keeps the dialog open saying why; accepted ones (a relative one
// taken from the workspace) become the session's folders.
func TestNewSessionDialogTakesFurtherFolders(t *testing.T) {
	h := silentSession(t)
	h.ui.sessions.showNew()
	ws, dirs := entryWith(h, "/path/to/project"), entryWith(h, "optional; e.g. ../shared-lib, ~/src/docs")
	if dirs == nil {
		t.Fatal("the New session dialog has no field for further folders")
	}
	proj, lib := filepath.Join(h.dir, "proj"), filepath.Join(h.dir, "lib")
	for _, d := range []string{proj, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws.SetText(proj)
	dirs.SetText("../missing")
	dirs.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.win.Canvas().Overlays().Top() == nil || !h.overlayShows("does not exist") {
		t.Fatal("a missing further folder did not keep the dialog open with the reason")
	}
	if h.win.Canvas().Focused() != dirs {
		t.Error("the focus is not in the field at fault")
	}
	before := h.ui.live
	dirs.SetText("../lib")
	dirs.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the new session", func() bool {
		return h.ui.live != before && h.ui.live != nil && h.ui.live.sess != nil && h.ui.live.info.workspace == proj
	})
	meta, err := h.ui.wb.Session(h.ui.live.sess.Snapshot().Meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := agent.Roots(meta); len(got) != 1 || got[0] != lib {
		t.Errorf("the session's folders are %v; want [%s]", got, lib)
	}
	if got := h.ui.head.title.Text; !strings.HasSuffix(got, proj+" + "+lib) {
		t.Errorf("the header says %q; want the workspace and the further folder", got)
	}
}
