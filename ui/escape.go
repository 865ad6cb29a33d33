package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// Escape closes the topmost dialog as its Cancel or Close button would.
// The window's views — the shortcuts sheet, search and settings — replace
// each other instead of piling up, so a sheet never stays open under
// another dialog.

// dismissWords are the labels of the buttons that close a dialog without
// doing anything, most specific first.
var dismissWords = []string{"Cancel", "Close", "Keep working", "No", "Not now"}

// dismissTop closes the topmost dialog of c by tapping the dismissing
// button of its button row; it reports whether there was one.
func dismissTop(c fyne.Canvas) bool {
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

// escEntry is a text field that closes its dialog on Escape, which a
// plain Entry swallows while it has the focus.
type escEntry struct {
	widget.Entry
}

// newEscEntry returns a single-line escEntry.
func newEscEntry() *escEntry {
	e := &escEntry{}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	e.ExtendBaseWidget(e)
	return e
}

// newEscMultiLineEntry returns a multi-line escEntry.
func newEscMultiLineEntry() *escEntry {
	e := newEscEntry()
	e.MultiLine = true
	return e
}

// TypedKey closes the dialog on Escape and passes every other key on.
func (e *escEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && dismissTop(fyne.CurrentApp().Driver().CanvasForObject(e)) {
		return
	}
	e.Entry.TypedKey(k)
}

// onEscape is the window's handler for Escape while no field has the
// focus.
func (u *UI) onEscape() { dismissTop(u.win.Canvas()) }

// showView shows d, one of the window's views (the shortcuts sheet,
// search, settings), closing the one shown before.
func (u *UI) showView(d dialog.Dialog) {
	if prev := u.view; prev != nil {
		u.view = nil
		prev.Hide()
	}
	u.view = d
	d.SetOnClosed(func() {
		if u.view == d {
			u.view = nil
		}
	})
	d.Show()
}
