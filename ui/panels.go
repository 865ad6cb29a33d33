package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	tw "github.com/tally-dev/tally/ui/widget"
)

// Side panels: the session list on the left and the context panel on the
// right can be hidden with the header's toggles (or Ctrl+B / Ctrl+J), so
// the chat keeps its room in small windows. Below wideEnough the session
// list folds away on its own until the user shows it again.

// wideEnough is the window width from which the session list shows by
// default; narrower windows (960×600 laptops) fold it into its toggle.
const wideEnough = 1120

// panels is the window's body: the chat column between the two panels.
type panels struct {
	left, center, right fyne.CanvasObject
	showLeft, showRight bool
	leftByUser          bool    // the user chose; width no longer decides
	leftOff, rightOff   float64 // the splits' offsets, kept across changes
	body                *fyne.Container
	leftB, rightB       *widget.Button
}

func newPanels(left, center, right fyne.CanvasObject) *panels {
	p := &panels{left: left, center: center, right: right, showLeft: true, showRight: true, leftOff: 0.2, rightOff: 0.7}
	p.body = container.NewStack()
	p.leftB = &widget.Button{Icon: theme.ListIcon(), Importance: widget.LowImportance, OnTapped: p.toggleLeft}
	p.rightB = &widget.Button{Icon: theme.MenuIcon(), Importance: widget.LowImportance, OnTapped: p.toggleRight}
	p.arrange()
	return p
}

// content is the body wrapped in a watcher that folds the session list
// away in narrow windows.
func (p *panels) content() fyne.CanvasObject {
	return container.New(&tw.WidthWatcher{OnWidth: p.widthChanged}, p.body)
}

func (p *panels) toggleLeft() {
	p.showLeft, p.leftByUser = !p.showLeft, true
	p.arrange()
}

func (p *panels) toggleRight() {
	p.showRight = !p.showRight
	p.arrange()
}

func (p *panels) widthChanged(w float32) {
	if p.leftByUser {
		return
	}
	if want := w >= wideEnough; want != p.showLeft {
		p.showLeft = want
		p.arrange()
	}
}

// arrange rebuilds the body from the panels shown, keeping the split
// offsets the user set.
func (p *panels) arrange() {
	if cur := p.body.Objects; len(cur) == 1 {
		p.keepOffsets(cur[0])
	}
	mid := p.center
	if p.showRight {
		s := container.NewHSplit(p.center, p.right)
		s.Offset = p.rightOff
		mid = s
	}
	obj := mid
	if p.showLeft {
		s := container.NewHSplit(p.left, mid)
		s.Offset = p.leftOff
		obj = s
	}
	p.body.Objects = []fyne.CanvasObject{obj}
	p.body.Refresh()
	p.leftB.Importance, p.rightB.Importance = widget.LowImportance, widget.LowImportance
	if p.showLeft {
		p.leftB.Importance = widget.MediumImportance
	}
	if p.showRight {
		p.rightB.Importance = widget.MediumImportance
	}
	p.leftB.Refresh()
	p.rightB.Refresh()
}

// keepOffsets remembers the offsets of the splits being replaced.
func (p *panels) keepOffsets(o fyne.CanvasObject) {
	s, ok := o.(*container.Split)
	if !ok {
		return
	}
	if s.Leading == p.left {
		p.leftOff = s.Offset
		s, ok = s.Trailing.(*container.Split)
		if !ok {
			return
		}
	}
	if s.Leading == p.center {
		p.rightOff = s.Offset
	}
}
