package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/settings"
)

func ctrl(k fyne.KeyName) *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault}
}

// One search box finds a message in any session, also in an archived
// cycle, and choosing the hit opens the session at the message.
func TestSearchAcrossSessionsJumpsToTheMessage(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("the needle is in calc.go"), llmtest.Text("brief"), llmtest.Text("B answer")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	a := h.openNew("A")
	h.send("where is the needle?")
	h.waitIdle()
	h.newCycle()
	h.waitFor("the new cycle", func() bool { return !h.ui.live.job.running && h.ui.live.sess.Snapshot().Meta.Cycle == 2 })
	h.openNew("B")
	h.send("something else")
	h.waitIdle()

	h.ui.input.prompt.TypedShortcut(ctrl(fyne.KeyK))
	v, ok := shown[*searchView](h)
	if !ok {
		t.Fatal("Ctrl+K did not open the search")
	}
	v.entry.SetText("needle calc")
	v.entry.OnSubmitted("needle calc")
	h.waitFor("the hits", func() bool { return len(v.hits) > 0 })
	hit := v.hits[0]
	if hit.Session != a || hit.Current || !strings.Contains(hitPlace(hit), "cycle 1 (archived)") {
		t.Fatalf("first hit %+v (%s)", hit, hitPlace(hit))
	}
	v.list.Select(0)
	h.waitFor("session A with the message", func() bool {
		return h.ui.live != nil && h.ui.live.id == a && h.ui.chat.Found != nil
	})
	if h.ui.chat.Found.Text != "the needle is in calc.go" {
		t.Errorf("scrolled to %q", h.ui.chat.Found.Text)
	}
}

// The window's shortcuts work while the prompt has the focus, and F1
// lists them.
func TestKeyboardShortcuts(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("write_file", `{"path":"k.txt","content":"yes"}`), llmtest.Text("written")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	h.win.Canvas().Focus(h.ui.input.prompt)

	h.send("write k.txt")
	h.pending()
	h.ui.input.prompt.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyY, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift})
	h.waitIdle()
	if b, err := os.ReadFile(filepath.Join(ws, "k.txt")); err != nil || string(b) != "yes" {
		t.Errorf("Ctrl+Shift+Y did not approve the write: %q, %v", b, err)
	}

	left := h.ui.panels.showLeft
	h.ui.input.prompt.TypedShortcut(ctrl(fyne.KeyB))
	if h.ui.panels.showLeft == left {
		t.Error("Ctrl+B did not toggle the session list")
	}
	h.ui.input.prompt.TypedShortcut(ctrl(fyne.KeyComma))
	if _, ok := shown[*settings.Form](h); !ok {
		t.Error("Ctrl+, did not open Settings")
	}
	overlays := len(h.win.Canvas().Overlays().List())
	h.ui.input.prompt.TypedShortcut(ctrl(fyne.KeyN))
	if len(h.win.Canvas().Overlays().List()) <= overlays || !h.shows("New session") {
		t.Error("Ctrl+N did not open the new-session dialog")
	}
	test.Type(h.ui.input.prompt, "x") // ordinary typing still reaches the prompt
	h.win.Canvas().(interface{ OnTypedKey() func(*fyne.KeyEvent) }).OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyF1})
	for _, want := range []string{"Ctrl+N", "Ctrl+Enter", "Ctrl+K", "Ctrl+Shift+Y", "F1"} {
		if !h.overlayShows(want) {
			t.Errorf("the shortcuts sheet lacks %s", want)
		}
	}
}
