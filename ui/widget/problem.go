package widget

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// ProblemLine says in red what is wrong with a form, in a space it keeps
// whether or not there is something to say. A line that appeared under a
// field pushed the fields after it down (or grew the dialog, which is
// centred again), and one that went away as you typed pulled them back
// up, so a click aimed at one field landed on another. Say and Clear
// change the text only; the line is always shown.
type ProblemLine struct {
	widget.BaseWidget
	label *widget.Label
	lines int
}

// NewProblemLine returns an empty problem line keeping room for lines
// lines of text; a longer message still takes the room it needs.
func NewProblemLine(lines int) *ProblemLine {
	p := &ProblemLine{label: &widget.Label{Importance: widget.DangerImportance, Wrapping: fyne.TextWrapWord}, lines: max(lines, 1)}
	p.ExtendBaseWidget(p)
	return p
}

// Say shows msg.
func (p *ProblemLine) Say(msg string) { p.label.SetText(msg) }

// Clear empties the line, keeping its space.
func (p *ProblemLine) Clear() { p.label.SetText("") }

// Text is what the line says, "" when nothing.
func (p *ProblemLine) Text() string { return p.label.Text }

// CreateRenderer implements fyne.Widget.
func (p *ProblemLine) CreateRenderer() fyne.WidgetRenderer {
	return &problemRenderer{p: p, objects: []fyne.CanvasObject{p.label}}
}

// problemRenderer lays the label over the whole line and keeps the
// line's height for p.lines lines.
type problemRenderer struct {
	p       *ProblemLine
	objects []fyne.CanvasObject
}

func (r *problemRenderer) Layout(size fyne.Size) {
	r.p.label.Move(fyne.NewPos(0, 0))
	r.p.label.Resize(size)
}

func (r *problemRenderer) MinSize() fyne.Size {
	m := r.p.label.MinSize()
	th := r.p.Theme()
	line := fyne.MeasureText("M", th.Size(theme.SizeNameText), r.p.label.TextStyle).Height
	if h := line*float32(r.p.lines) + 2*th.Size(theme.SizeNameInnerPadding); h > m.Height {
		m.Height = h
	}
	return m
}

func (r *problemRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *problemRenderer) Refresh()                     { r.p.label.Refresh() }
func (r *problemRenderer) Destroy()                     {}
