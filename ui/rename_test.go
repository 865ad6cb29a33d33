package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Renaming the open session used to drop the workspace from the header,
// and Enter in the title field did nothing.
func TestRenameWithEnterKeepsTheWorkspaceInTheHeader(t *testing.T) {
	h := newHarness(t, map[string]string{})
	ws := h.newSession()
	h.ui.sessions.selectID(h.ui.live.id)
	h.ui.sessions.showRename()
	if len(h.ui.win.Canvas().Overlays().List()) == 0 {
		t.Fatal("no rename dialog")
	}
	var entry *widget.Entry
	for _, o := range h.ui.win.Canvas().Overlays().List() {
		fynetest.Walk(o, func(c fyne.CanvasObject) bool {
			if e, ok := c.(*tw.EscEntry); ok && entry == nil {
				entry = &e.Entry
			}
			return true
		})
	}
	if entry == nil {
		t.Fatal("the rename dialog has no title field")
	}
	entry.SetText("renamed by Enter")
	entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the rename", func() bool { return strings.HasPrefix(h.ui.head.title.Text, "renamed by Enter") })
	if !strings.Contains(h.ui.head.title.Text, ws) {
		t.Errorf("header %q lost the workspace %q", h.ui.head.title.Text, ws)
	}
}

// The footer used to show "cost $0.00" for a model without a price until
// its first request, then "n/a" (issue 12 #8): unknown is n/a from the start.
func TestFooterShowsNAForAnUnpricedModelFromTheStart(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "k", "TALLY_MODEL": "mystery-model"})
	h.newSession()
	if text := h.ui.footer.State.Text(time.Now()); strings.Contains(text, "$0.00") || !strings.Contains(text, "cost n/a") {
		t.Errorf("footer %q; want cost n/a before any request", text)
	}
}

// With the endpoint set and only the key missing, the banner used to say
// "No model endpoint is configured" (issue 12 #10): it names what is
// missing, and its Settings button opens on the key field.
func TestBannerNamesTheMissingKeyAndFocusesIt(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "https://api.deepseek.com/v1"})
	h.newSession()
	h.waitFor("the banner", func() bool { return h.ui.banner.Text() != "" })
	if got := h.ui.banner.Text(); !strings.Contains(got, "API key missing for api.deepseek.com") {
		t.Fatalf("banner %q does not say the key is what is missing", got)
	}
	h.ui.settingsFor(h.ui.live.info.noModel)()
	if _, ok := shown[*settings.Form](h); !ok || !focusedOnKey(h) {
		t.Error("Settings did not open on the API key field")
	}
}
