package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Side panels: the session list on the left and the context panel on the
// right can be hidden with the header's toggles (or Ctrl+B / Ctrl+J), so
// the chat keeps its room in small windows. Below wideEnough the session
// list folds away on its own until the user shows it again. Where the
// three columns cannot all have the width they need (a narrow window, or
// large text), one panel folds to make room: the side panel when the user
// unfolded the session list, otherwise the session list. A split squeezed
// below its columns' widths drew one column over the next.

// wideEnough is the window width from which the session list shows by
// default; narrower windows (960×600 laptops) fold it into its toggle.
const wideEnough = 1120

// panels is the window's body: the chat column between the two panels.
type panels struct {
	left, center, right fyne.CanvasObject
	showLeft, showRight bool
	leftByUser          bool    // the user chose; width no longer decides
	rightMadeRoom       bool    // the side panel folded to make room for the session list
	leftOff, rightOff   float64 // the splits' offsets, kept across changes
	width               float32 // the body's width at its last layout
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

// content is the body in a layout that folds the panels away where they
// do not fit.
func (p *panels) content() fyne.CanvasObject {
	return container.New(panelsLayout{p}, p.body)
}

// panelsLayout lays the body out full size; after each layout (a resize,
// or a change of the theme's sizes) it lets the panels fold or unfold.
type panelsLayout struct{ p *panels }

// Layout implements fyne.Layout.
func (l panelsLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
	if size.Width <= 0 {
		return
	}
	if size.Width != l.p.width {
		l.p.width = size.Width
		l.p.widthChanged(size.Width)
	}
	l.p.makeRoom()
}

// MinSize implements fyne.Layout: small, so the window can shrink; the
// panels fold where the columns do not fit.
func (l panelsLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(200, 100) }

func (p *panels) toggleLeft() {
	p.showLeft, p.leftByUser = !p.showLeft, true
	p.arrange()
	p.makeRoom()
}

func (p *panels) toggleRight() {
	p.showRight = !p.showRight
	if p.showRight && p.rightMadeRoom {
		p.rightMadeRoom = false
	}
	if p.showRight && p.showLeft && !p.fits() {
		p.showLeft, p.leftByUser = false, true // the user asked for the side panel
	}
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

// makeRoom folds a panel while the three columns cannot all have the
// width they need, and shows the side panel again once they can.
func (p *panels) makeRoom() {
	switch {
	case p.width <= 0:
	case p.showLeft && p.showRight && !p.fits():
		if p.leftByUser {
			p.showRight, p.rightMadeRoom = false, true
		} else {
			p.showLeft = false
		}
		p.arrange()
	case p.rightMadeRoom && (!p.showLeft || p.fits()):
		p.showRight, p.rightMadeRoom = true, false
		p.arrange()
	}
}

// fits reports whether the session list, the chat column and the side
// panel fit side by side at the body's width, each as wide as it needs.
func (p *panels) fits() bool {
	divider := 2 * theme.Padding() // a split's divider
	need := p.left.MinSize().Width + divider + p.center.MinSize().Width + divider + p.right.MinSize().Width
	return need <= p.width
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
