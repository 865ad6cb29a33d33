package widget

// Golden markup tests for the widgets: the checklist, the context gauge and
// the cache chip, each built with its constructor and fixed data in a
// window of a fixed size, compared with a file under
// ui/widget/testdata/golden/ (see package ui/internal/fynetest for how to
// update one).

import (
	"testing"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// goldenItems is a checklist with an item in every state.
func goldenItems() []todo.Item {
	return []todo.Item{
		{ID: "1", Content: "Read calc.go and find the bug in Add", Status: todo.Completed},
		{ID: "2", Content: "Fix Add to return a + b", Status: todo.Completed},
		{ID: "3", Content: "Run go test ./calc/...", Status: todo.InProgress},
		{ID: "4", Content: "Add a test for negative numbers", Status: todo.Pending},
		{ID: "5", Content: "Update the changelog", Status: todo.Pending},
	}
}

func TestGoldenChecklist(t *testing.T) {
	fynetest.GoldenApp(t)
	c := NewChecklist()
	win := fynetest.Window(t, c, 420, 320)
	fynetest.AssertGolden(t, win, "checklist_empty")
	c.SetItems(goldenItems())
	fynetest.AssertGolden(t, win, "checklist")
	c.Toggle()
	fynetest.AssertGolden(t, win, "checklist_collapsed")
}

func TestGoldenGauge(t *testing.T) {
	fynetest.GoldenApp(t)
	g := NewGauge()
	win := fynetest.Window(t, g, 480, 90)
	// A 128k window: auto-compaction at 128k − 20k summary reserve − 13k
	// buffer, the new cycle at 75 %; the two labels are close together.
	g.SetLevel(84_200, 128_000, true)
	g.SetThresholds(95_000, 96_000)
	fynetest.AssertGolden(t, win, "gauge")
	// Nearly full and partly estimated: the error colour and "≈".
	g.SetLevel(122_000, 128_000, false)
	fynetest.AssertGolden(t, win, "gauge_full")
}

func TestGoldenCacheChip(t *testing.T) {
	const prompt = 10_000
	for _, c := range []struct {
		name  string
		hit   int
		first bool
	}{
		{"cold", 0, true},
		{"green", 9_970, false},
		{"yellow", 6_000, false},
		{"red", 1_500, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fynetest.GoldenApp(t)
			chip := NewCacheChip()
			win := fynetest.Window(t, chip, 200, 48)
			chip.Set(ledger.Row{PromptTokens: prompt, CacheHitTokens: c.hit, CacheMissTokens: prompt - c.hit,
				CacheReported: true}, c.first)
			fynetest.AssertGolden(t, win, "cache_chip_"+c.name)
		})
	}
}
