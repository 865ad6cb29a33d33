package widget

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// Escape closes the topmost dialog as its Cancel or Close button would;
// EscEntry is a text field that lets it, where a plain Entry swallows
// Escape while it has the focus.

// dismissWords are the labels of the buttons that close a dialog without
// doing anything, most specific first.
var dismissWords = []string{"Cancel", "Close", "Keep working", "No", "Not now"}

// DismissTop closes the topmost dialog of c by tapping the dismissing
// button of its button row; it reports whether there was one.
func DismissTop(c fyne.Canvas) bool {
	if c == nil {
		return false
	}
	pop, ok := c.Overlays().Top().(*widget.PopUp)
	if !ok {
		return false
	}
	found := map[string]*widget.Button{}
	for _, b := range dialogButtons(pop) {
		if b.Visible() && !b.Disabled() && b.OnTapped != nil {
			found[b.Text] = b
		}
	}
	for _, w := range dismissWords {
		if b := found[w]; b != nil {
			b.OnTapped()
			return true
		}
	}
	return false
}

// dialogButtons returns the buttons of a dialog's button row: a Fyne
// dialog's pop-up holds its icon, background, content, button row and
// title, in that order.
func dialogButtons(pop *widget.PopUp) []*widget.Button {
	box, ok := pop.Content.(*fyne.Container)
	if !ok || len(box.Objects) != 5 {
		return nil
	}
	var out []*widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Button:
			out = append(out, v)
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		}
	}
	walk(box.Objects[3])
	return out
}

// EscEntry is a text field that closes its dialog on Escape (see
// DismissTop).
type EscEntry struct {
	widget.Entry
}

// NewEscEntry returns a single-line EscEntry.
func NewEscEntry() *EscEntry {
	e := &EscEntry{}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	e.ExtendBaseWidget(e)
	return e
}

// NewEscMultiLineEntry returns a multi-line EscEntry.
func NewEscMultiLineEntry() *EscEntry {
	e := NewEscEntry()
	e.MultiLine = true
	return e
}

// TypedKey closes the dialog on Escape and passes every other key on.
func (e *EscEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && DismissTop(fyne.CurrentApp().Driver().CanvasForObject(e)) {
		return
	}
	e.Entry.TypedKey(k)
}
