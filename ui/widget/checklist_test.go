package widget

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// The item in progress is highlighted and each status has its colour;
// collapsing leaves the summary alone.
func TestChecklistRowsStyledByStatus(t *testing.T) {
	test.NewTempApp(t)
	c := NewChecklist()
	w := fynetest.Window(t, c, 400, 300)
	c.SetItems([]todo.Item{
		{ID: "1", Content: "Find the bug", Status: todo.Completed},
		{ID: "2", Content: "Fix calc.Add", Status: todo.InProgress},
		{ID: "3", Content: "Run the tests", Status: todo.Pending},
	})
	rows := visibleChecklistRows(w.Canvas().Content())
	if len(rows) != 3 {
		t.Fatalf("%d checklist rows on screen; want 3", len(rows))
	}
	marked := 0
	for _, r := range rows {
		if r.bg.Visible() {
			marked++
			if r.item.Status != todo.InProgress {
				t.Errorf("row %q is highlighted but %s", r.item.Content, r.item.Status)
			}
		}
		seg := r.label.Segments[0].(*widget.TextSegment)
		want := map[todo.Status]fyne.ThemeColorName{todo.Completed: theme.ColorNameForeground,
			todo.InProgress: theme.ColorNamePrimary, todo.Pending: theme.ColorNamePlaceHolder}[r.item.Status]
		if seg.Style.ColorName != want {
			t.Errorf("row %q (%s) in %s; want %s", r.item.Content, r.item.Status, seg.Style.ColorName, want)
		}
	}
	if marked != 1 {
		t.Errorf("%d rows highlighted; want exactly the one in progress", marked)
	}
	test.Tap(c.header)
	if !c.Collapsed() || c.list.Visible() {
		t.Errorf("collapsed: %v, list visible %v; want the summary alone", c.Collapsed(), c.list.Visible())
	}
}

func visibleChecklistRows(o fyne.CanvasObject) []*checklistRow {
	var out []*checklistRow
	fynetest.Walk(o, func(o fyne.CanvasObject) bool {
		if !o.Visible() {
			return false
		}
		if v, ok := o.(*checklistRow); ok {
			out = append(out, v)
			return false
		}
		return true
	})
	return out
}
