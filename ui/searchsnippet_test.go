package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// Search snippets showed the engine's "</turn_meta>" header and did not
// mark the words found: the blocks are left out and the words are bold.
func TestSearchSnippetsHideEngineBlocksAndBoldTheMatch(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("The calculator is fixed.")))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("please fix the Calculator bug")
	h.waitIdle()
	h.ui.showSearch()
	v, _ := shown[*searchView](h)
	v.entry.SetText("calculator")
	v.entry.OnSubmitted("calculator")
	h.waitFor("the hits", func() bool { return len(v.hits) >= 2 })
	fynetestLayout(h)
	var rows int
	walkRichText(v.list, func(rt *widget.RichText) {
		s := rt.String()
		if !strings.Contains(strings.ToLower(s), "calculator") {
			return
		}
		rows++
		if strings.Contains(s, "turn_meta") || strings.Contains(s, "working_set") {
			t.Errorf("snippet %q shows the engine's block", s)
		}
		bold := false
		for _, seg := range rt.Segments {
			if ts, ok := seg.(*widget.TextSegment); ok && strings.EqualFold(ts.Text, "calculator") {
				bold = ts.Style.TextStyle.Bold
			}
		}
		if !bold {
			t.Errorf("snippet %q does not show the match in bold", s)
		}
	})
	if rows < 2 {
		t.Fatalf("%d snippets shown; want the prompt and the answer", rows)
	}
}

// fynetestLayout lays the window's dialogs out as the next frame would.
func fynetestLayout(h *harness) {
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetest.LayoutAll(o)
	}
}

// walkRichText calls each for every rich text shown in o.
func walkRichText(o fyne.CanvasObject, each func(*widget.RichText)) {
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if rt, ok := c.(*widget.RichText); ok && c.Visible() {
			each(rt)
		}
		return true
	})
}

// A message a rewind took out of the conversation was labelled "replaced
// by a compaction" in the hit list: the label names the rewrite that did
// it, as the export does.
func TestSearchHitNamesTheRewriteThatReplacedIt(t *testing.T) {
	h := workbench.SearchHit{Title: "T", Cycle: 1, Superseded: true, SupersededBy: "rewind to turn 3", Role: "user"}
	if got := hitPlace(h); !strings.Contains(got, "replaced by rewind to turn 3") || strings.Contains(got, "compaction") {
		t.Errorf("a rewound hit is placed %q", got)
	}
	h.SupersededBy = "auto compaction"
	if got := hitPlace(h); !strings.Contains(got, "replaced by auto compaction") {
		t.Errorf("a compacted hit is placed %q", got)
	}
	h.SupersededBy = ""
	if got := hitPlace(h); !strings.Contains(got, "replaced by a compaction") {
		t.Errorf("a hit of an older record is placed %q", got)
	}
}
