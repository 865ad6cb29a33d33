package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Export… writes the selected session as a document to share.
func TestExportWritesTheSessionAsADocument(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("The answer is **42**.")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("what is the answer?")
	h.waitIdle()
	h.waitFor("the export button", func() bool { return !h.ui.sessions.export.Disabled() })
	test.Tap(h.ui.sessions.export)
	h.waitFor("the export dialog", func() bool { return h.ui.exporting != nil })
	e := h.ui.exporting
	path := filepath.Join(t.TempDir(), "shared.md")
	e.format.SetSelected("HTML page (.html)")
	e.path.SetText(path)
	e.format.SetSelected("Markdown (.md)")
	if e.path.Text != path {
		t.Fatalf("choosing the format changed the path to %q", e.path.Text)
	}
	test.Tap(buttonIn(h.ui.win.Canvas().Overlays().Top(), "Export"))
	h.waitFor("the export", func() bool { return strings.Contains(h.ui.banner.Text(), "Exported to") })
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "### You\n\nwhat is the answer?") || !strings.Contains(string(data), "The answer is **42**.") {
		t.Fatalf("exported %q, %v", data, err)
	}
}
