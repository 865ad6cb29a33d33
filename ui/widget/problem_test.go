package widget

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// A problem line keeps its room: the field under it stays where it is
// when a message of up to Lines lines is said, and when it is cleared.
func TestProblemLineKeepsItsRoom(t *testing.T) {
	test.NewTempApp(t)
	p := NewProblemLine(2)
	under := widget.NewEntry()
	box := container.NewVBox(widget.NewEntry(), p, under)
	w := test.NewTempWindow(t, box)
	w.Resize(fyne.NewSize(300, 400))
	at := func() float32 { box.Refresh(); box.Layout.Layout(box.Objects, box.Size()); return under.Position().Y }
	before := at()
	for _, msg := range []string{"One short line.", "A longer message that wraps onto a second line in a field this narrow.", ""} {
		p.Say(msg)
		if y := at(); y != before {
			t.Errorf("with %q the field under the line moved from %v to %v", msg, before, y)
		}
	}
	p.Say("x")
	p.Clear()
	if p.Text() != "" || !p.Visible() {
		t.Errorf("cleared: text %q, visible %v", p.Text(), p.Visible())
	}
}
