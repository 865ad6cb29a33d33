package chat

import (
	"fmt"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The compaction row's last line was clipped by the card under it: drawn
// in a row that had shown a tool card since the window was made narrower,
// its text was measured at the width its hidden label had kept from
// before, one line short. Every row in view must be as tall as what it
// draws, wherever the list recycled it.
func TestARecycledRowIsAsTallAsItsText(t *testing.T) {
	test.NewTempApp(t)
	test.ApplyTheme(t, tw.ThemeFor("dark"))
	var q []func()
	drain := func() {
		for len(q) > 0 {
			f := q[0]
			q = q[1:]
			f()
		}
	}
	c := New(func(f func()) { q = append(q, f) }, nil, nil)
	win := fynetest.Window(t, c.Box, 1400, 400)
	drain()
	var its []*Item
	for i := range 20 {
		its = append(its, &Item{Kind: ItemTool, Title: fmt.Sprintf("read_file calc/table.go from line %d", i*100), Status: toolOK})
	}
	rebuild := RebuildItem(rewrite.Info{Kind: rewrite.Compaction, TokensBefore: 20_100, TokensAfter: 10_000,
		MissTokens: 5_500, PaysBackAfter: 4.9, Fidelity: &compact.Fidelity{Verbatim: 29, Gone: 10}, Summary: "what was done"})
	its = append(its, rebuild)
	for i := range 20 {
		its = append(its, &Item{Kind: ItemTool, Title: fmt.Sprintf("read_file go.mod %d", i), Status: toolOK})
	}
	c.AppendItems(its...)
	c.AwaitNext = rebuild
	c.NoteNextRequest(ledger.Row{Request: 9, PromptTokens: 10_100})
	drain()
	c.List.ScrollToTop()
	drain()
	// Narrower, down to the end and back up to the compaction row: it
	// comes into view in a row that showed a tool card.
	win.Resize(fyne.NewSize(640, 400))
	drain()
	c.List.ScrollToBottom()
	drain()
	c.List.ScrollTo(c.Index(rebuild))
	drain()
	fynetest.LayoutAll(win.Canvas().Content())
	seen := false
	for _, s := range c.List.shown {
		r := s.o.(*MessageRow)
		if r.Item == rebuild {
			seen = true
		}
		if need, got := r.MinSize().Height, c.List.heightOf(s.id); need > got+1 {
			t.Errorf("row %d (%v) needs %.0f px and is %.0f px tall: its last line is cut off", s.id, r.Item.Kind, need, got)
		}
	}
	if !seen {
		t.Fatal("the compaction row is not in view")
	}
}
