package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// Compact…, Purge… and New cycle were enabled on a session with no
// messages, and the rename pencil and delete bin with no session
// selected.
func TestActionsAreOffWithNothingToActOn(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("done")))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	v := h.ui.sessions
	if !v.rename.Disabled() || !v.remove.Disabled() {
		t.Error("rename or delete is enabled with no session selected")
	}
	h.newSession()
	h.waitFor("the list", func() bool { return len(v.items) == 1 && h.q.empty() })
	if v.rename.Disabled() || v.remove.Disabled() {
		t.Error("rename or delete is disabled with the open session selected")
	}
	a := h.ui.actions
	for _, b := range []struct {
		name string
		off  bool
	}{{"Compact", a.compact.Disabled()}, {"Purge", a.purge.Disabled()}, {"New cycle", a.cycle.Disabled()}} {
		if !b.off {
			t.Errorf("%s is enabled on an empty session", b.name)
		}
	}
	if !a.why.Visible() || a.why.Text == "" {
		t.Error("nothing says why the buttons are off")
	}
	h.send("hello")
	h.waitIdle()
	if a.compact.Disabled() || a.purge.Disabled() || a.cycle.Disabled() {
		t.Error("the buttons stay off after the first turn")
	}
	h.ui.deleteSession(h.ui.live.id)
	h.waitFor("the empty list", func() bool { return len(v.items) == 0 && h.q.empty() })
	if !v.rename.Disabled() || !v.remove.Disabled() {
		t.Error("rename or delete is enabled after the selected session was deleted")
	}
}

// The delete-session confirmation offered its irreversible choice as the
// blue default button: it is a "Delete" button in the danger style.
func TestDeleteConfirmationIsADangerButton(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("done")))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	v := h.ui.sessions
	h.newSession()
	h.waitFor("the list", func() bool { return len(v.items) == 1 && h.q.empty() })
	test.Tap(v.remove)
	var b *widget.Button
	h.waitFor("the confirmation", func() bool {
		if top := h.win.Canvas().Overlays().Top(); top != nil {
			b = fynetest.Button(top, "Delete")
		}
		return b != nil
	})
	if b.Importance != widget.DangerImportance {
		t.Errorf("the Delete button's importance is %v; want the danger style", b.Importance)
	}
}
