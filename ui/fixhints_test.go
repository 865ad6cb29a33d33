package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The 401 banner said "open Settings" with no Settings button.
func TestRejectedKeyBannerHasASettingsButton(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("never")), llmtest.WithAPIKey("the-right-key"))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("hello")
	h.waitIdle()
	if !strings.Contains(h.ui.banner.Text(), "rejected the API key") {
		t.Fatalf("banner %q", h.ui.banner.Text())
	}
	b := buttonIn(h.ui.banner, "Settings")
	if b == nil || !b.Visible() {
		t.Fatal("the banner has no Settings button")
	}
	test.Tap(b)
	if _, ok := shown[*settings.Form](h); !ok {
		t.Fatal("the button did not open the settings")
	}
	if !focusedOnKey(h) {
		t.Error("the settings did not open on the API key")
	}
}

// The rename field was a few characters wide.
func TestRenameFieldIsWide(t *testing.T) {
	h := silentSession(t)
	h.waitFor("the list", func() bool { return len(h.ui.sessions.items) == 1 && h.q.empty() })
	h.ui.sessions.showRename()
	e, ok := h.win.Canvas().Focused().(*tw.EscEntry)
	if !ok {
		t.Fatalf("the rename field has no focus (%T)", h.win.Canvas().Focused())
	}
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetestLayoutAll(o)
	}
	if w := e.Size().Width; w < 300 {
		t.Errorf("the rename field is %.0f px wide", w)
	}
}

// fynetestLayoutAll lays o out as the next frame would.
func fynetestLayoutAll(o fyne.CanvasObject) { fynetest.LayoutAll(o) }
