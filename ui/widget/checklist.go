package widget

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/internal/text"
)

// ChecklistSummary is the collapsed form of a checklist: "3/7 · current
// item" (done / all, then the item in progress, if any).
func ChecklistSummary(items []todo.Item) string {
	if len(items) == 0 {
		return "no checklist yet"
	}
	done, cur := 0, ""
	for _, it := range items {
		switch it.Status {
		case todo.Completed:
			done++
		case todo.InProgress:
			cur = it.Content
		}
	}
	s := fmt.Sprintf("%d/%d", done, len(items))
	if cur != "" {
		s += " · " + text.FirstLine(cur, 80)
	}
	return s
}

// activeIndex returns the index of the item in progress, or of the first
// pending one when none is, or -1.
func activeIndex(items []todo.Item) int {
	pending := -1
	for i, it := range items {
		if it.Status == todo.InProgress {
			return i
		}
		if pending < 0 && it.Status == todo.Pending {
			pending = i
		}
	}
	return pending
}

// Checklist is the session's task list as the agent keeps it: the item in
// progress highlighted, pending ones dimmed, completed ones ticked. Its
// header toggles between the full list and the one-line summary.
type Checklist struct {
	widget.BaseWidget

	items     []todo.Item
	collapsed bool
	header    *widget.Button // the header's button, without a text of its own
	title     *widget.Label  // the header's text, over the button
	list      *widget.List
	empty     *widget.Label
}

// NewChecklist returns an empty, expanded checklist.
func NewChecklist() *Checklist {
	c := &Checklist{}
	c.header = &widget.Button{Importance: widget.LowImportance, OnTapped: c.Toggle}
	// A button's text is never cut, so the summary (which names the item
	// in progress) made the side panel as wide as the item's title: the
	// text is a label that ends in "…" where the panel ends.
	c.title = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis}
	c.empty = &widget.Label{Text: "The agent has not made a checklist yet.", TextStyle: fyne.TextStyle{Italic: true}, Wrapping: fyne.TextWrapWord}
	c.list = widget.NewList(
		func() int { return len(c.items) },
		func() fyne.CanvasObject { return newChecklistRow() },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < len(c.items) {
				o.(*checklistRow).set(c.items[id])
			}
		})
	c.list.OnSelected = func(id widget.ListItemID) { c.list.Unselect(id) }
	c.ExtendBaseWidget(c)
	c.update(false)
	return c
}

// SetItems shows items (the whole list) and scrolls to the active one.
func (c *Checklist) SetItems(items []todo.Item) {
	c.items = append([]todo.Item(nil), items...)
	c.update(true)
}

// Items returns the items shown.
func (c *Checklist) Items() []todo.Item { return append([]todo.Item(nil), c.items...) }

// Summary returns the collapsed text.
func (c *Checklist) Summary() string { return ChecklistSummary(c.items) }

// Collapsed reports whether only the summary is shown.
func (c *Checklist) Collapsed() bool { return c.collapsed }

// Toggle switches between the list and the summary.
func (c *Checklist) Toggle() {
	c.collapsed = !c.collapsed
	c.update(true)
}

// HeaderText returns the header's whole text (it is shown cut to the
// panel's width).
func (c *Checklist) HeaderText() string { return c.title.Text }

func (c *Checklist) update(scroll bool) {
	arrow := "▾"
	if c.collapsed {
		arrow = "▸"
	}
	c.title.SetText(arrow + " Checklist  " + c.Summary())
	ShowIf(c.list, !c.collapsed && len(c.items) > 0)
	ShowIf(c.empty, !c.collapsed && len(c.items) == 0)
	c.list.Refresh()
	if i := activeIndex(c.items); scroll && i >= 0 && !c.collapsed {
		c.list.ScrollTo(i)
	}
	c.Refresh()
}

// MinSize keeps the list a few rows tall when expanded.
func (c *Checklist) MinSize() fyne.Size {
	m := c.BaseWidget.MinSize()
	if !c.collapsed && len(c.items) > 0 {
		m.Height = max(m.Height, c.header.MinSize().Height+3*c.list.MinSize().Height)
	}
	return m
}

// CreateRenderer implements fyne.Widget.
func (c *Checklist) CreateRenderer() fyne.WidgetRenderer {
	body := container.NewStack(c.list, container.NewVBox(c.empty))
	return widget.NewSimpleRenderer(container.NewBorder(container.NewStack(c.header, c.title), nil, nil, nil, body))
}

// checklistRow is one item: a status icon and the text, styled by status.
type checklistRow struct {
	widget.BaseWidget

	item  todo.Item
	bg    *canvas.Rectangle
	icon  *widget.Icon
	label *widget.RichText
}

func newChecklistRow() *checklistRow {
	r := &checklistRow{bg: canvas.NewRectangle(theme.Color(theme.ColorNameSelection)),
		icon:  widget.NewIcon(theme.CheckButtonIcon()),
		label: StyledText("", theme.ColorNameForeground, false)}
	r.bg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	r.ExtendBaseWidget(r)
	return r
}

// checklistStyle is how an item of a status is drawn.
type checklistStyle struct {
	Icon      fyne.Resource
	Color     fyne.ThemeColorName
	Bold      bool
	Highlight bool
}

func styleFor(s todo.Status) checklistStyle {
	switch s {
	case todo.Completed:
		return checklistStyle{Icon: theme.CheckButtonCheckedIcon(), Color: theme.ColorNameForeground}
	case todo.InProgress:
		return checklistStyle{Icon: theme.MediaPlayIcon(), Color: theme.ColorNamePrimary, Bold: true, Highlight: true}
	default:
		return checklistStyle{Icon: theme.CheckButtonIcon(), Color: theme.ColorNamePlaceHolder}
	}
}

func (r *checklistRow) set(it todo.Item) {
	r.item = it
	st := styleFor(it.Status)
	r.icon.SetResource(st.Icon)
	SetStyledText(r.label, it.Content, st.Color, st.Bold)
	r.bg.FillColor = theme.Color(theme.ColorNameSelection)
	ShowIf(r.bg, st.Highlight)
	r.bg.Refresh()
}

// CreateRenderer implements fyne.Widget.
func (r *checklistRow) CreateRenderer() fyne.WidgetRenderer {
	row := container.NewBorder(nil, nil, r.icon, nil, r.label)
	return widget.NewSimpleRenderer(container.NewStack(r.bg, row))
}
