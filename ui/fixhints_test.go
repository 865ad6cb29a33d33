package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/settings"
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

// A failed MCP test showed "client is closing: write |1: broken pipe" in
// faint text while the server's row still said "idle".
func TestFailedMCPTestSaysSoInASentence(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("crashy", mcp.ServerConfig{Command: "sh", Args: []string{"-c", "exit 3"}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, map[string]string{})
	h.ui.showMCPSettings()
	v, _ := shown[*mcpSettings](h)
	h.waitFor("the list", func() bool { return len(v.servers) == 1 })
	test.Tap(buttonIn(v.list, "Test"))
	h.waitFor("the test to fail", func() bool { return strings.Contains(v.status.Text, "failed") })
	if !strings.HasPrefix(v.status.Text, "The test of crashy failed: ") || v.status.Importance != widget.DangerImportance {
		t.Errorf("status %q (importance %v); want a sentence in the error colour", v.status.Text, v.status.Importance)
	}
	h.waitFor("the row to say so", func() bool { return rowSays(v.list, "test failed") })
	if rowSays(v.list, "\nidle") {
		t.Error("the row still says idle")
	}
}

// rowSays reports whether a label in o contains s.
func rowSays(o fyne.CanvasObject, s string) bool {
	found := false
	walkLabels(o, func(l *widget.Label) { found = found || strings.Contains(l.Text, s) })
	return found
}

// The rename field was a few characters wide.
func TestRenameFieldIsWide(t *testing.T) {
	h := silentSession(t)
	h.waitFor("the list", func() bool { return len(h.ui.sessions.items) == 1 && h.q.empty() })
	h.ui.sessions.showRename()
	e, ok := h.win.Canvas().Focused().(*widget.Entry)
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

// walkLabels calls each for every label drawn in o.
func walkLabels(o fyne.CanvasObject, each func(*widget.Label)) {
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if l, ok := c.(*widget.Label); ok {
			each(l)
		}
		return true
	})
}

// fynetestLayoutAll lays o out as the next frame would.
func fynetestLayoutAll(o fyne.CanvasObject) { fynetest.LayoutAll(o) }
