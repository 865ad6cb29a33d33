package rewind

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	tw "github.com/tally-dev/tally/ui/widget"
)

// Fold is a part of a view that opens and closes under a toggle, with the
// chat's carets: "▸ Title" while it is folded, "▾ Title" while it is open,
// its body under the toggle. (Fyne's Accordion points down while folded,
// the other way round.)
type Fold struct {
	widget.BaseWidget

	// Toggle opens and closes the fold; its text is the caret and the
	// title.
	Toggle *widget.Button
	// Body is what the fold shows while it is open.
	Body  fyne.CanvasObject
	title string
	open  bool
}

// NewFold returns a fold titled title over body, open or folded.
func NewFold(title string, body fyne.CanvasObject, open bool) *Fold {
	f := &Fold{Body: body, title: title}
	f.Toggle = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading, OnTapped: func() { f.SetOpen(!f.open) }}
	f.ExtendBaseWidget(f)
	f.SetOpen(open)
	return f
}

// IsOpen reports whether the body is shown.
func (f *Fold) IsOpen() bool { return f.open }

// SetOpen shows the body (true) or folds it away.
func (f *Fold) SetOpen(open bool) {
	f.open = open
	f.Toggle.SetText(f.caret() + " " + f.title)
	tw.ShowIf(f.Body, open)
	f.Refresh()
}

// Title returns the title, without the caret.
func (f *Fold) Title() string { return f.title }

// SetTitle changes the title, keeping the caret.
func (f *Fold) SetTitle(title string) {
	f.title = title
	f.Toggle.SetText(f.caret() + " " + title)
}

func (f *Fold) caret() string {
	if f.open {
		return "▾"
	}
	return "▸"
}

// CreateRenderer implements fyne.Widget.
func (f *Fold) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewVBox(f.Toggle, f.Body))
}
