package settings

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	tw "github.com/tally-dev/tally/ui/widget"
)

// The dialog's layout: a list of sections on the left, the shown
// section's rows on the right, each section scrolling on its own, and
// the line saying why Save refused the fields under them, next to Save.

// The sections' names, in the order the list shows them.
const (
	sectionConnection = "Connection"
	sectionModels     = "Models and profiles"
	sectionSafety     = "Safety"
	sectionCost       = "Context and cost"
	sectionExtensions = "Extensions"
	sectionAppearance = "Appearance"
)

// Sections returns the names of the dialog's sections, in the order the
// list on its left shows them.
func Sections() []string {
	return []string{sectionConnection, sectionModels, sectionSafety, sectionCost, sectionExtensions, sectionAppearance}
}

// section is one part of the dialog: its name in the list on the left,
// its rows and the area that scrolls them.
type section struct {
	name   string
	nav    *widget.Button
	form   *widget.Form
	scroll *container.Scroll
	body   fyne.CanvasObject // the scroll with the wheel over it
}

// newSection makes a section of the rows items, whose hints wrap under
// their fields.
func newSection(name string, items []*widget.FormItem) *section {
	for _, it := range items {
		wrapHint(it)
	}
	s := &section{name: name, form: widget.NewForm(items...)}
	s.scroll = container.NewVScroll(s.form)
	s.body = container.NewStack(s.scroll, newWheel(s.scroll))
	return s
}

// Settings dialog size: 80 % of the window, at least settingsMin (the
// whole of a 960×600 window less the margin), at most settingsMax, and
// never larger than the window less settingsMargin so that Save and
// Cancel stay on screen.
const settingsMargin = 40

var (
	settingsMin = fyne.NewSize(900, 560)
	settingsMax = fyne.NewSize(1240, 900)
)

// dialogSize is the dialog's size in a window of size win.
func dialogSize(win fyne.Size) fyne.Size {
	fit := func(w, least, most, room float32) float32 {
		return min(max(w*0.8, least), most, room-settingsMargin)
	}
	return fyne.NewSize(fit(win.Width, settingsMin.Width, settingsMax.Width, win.Width),
		fit(win.Height, settingsMin.Height, settingsMax.Height, win.Height))
}

// layOut puts the sections side by side with their list: the list on the
// left, the shown section on the right, the problem line under both.
func (f *Form) layOut(sections ...*section) fyne.CanvasObject {
	f.sections = sections
	nav := container.NewVBox()
	var bodies []fyne.CanvasObject
	for _, s := range sections {
		s.nav = &widget.Button{Text: s.name, Alignment: widget.ButtonAlignLeading, Importance: widget.LowImportance, OnTapped: func() { f.show(s) }}
		nav.Add(s.nav)
		bodies = append(bodies, s.body)
	}
	f.show(sections[0])
	return container.NewBorder(nil, f.problem, container.NewHBox(nav, widget.NewSeparator()), nil, container.New(everyStack{}, bodies...))
}

// everyStack lays its objects over each other, as a stack does, but is
// as large as the largest of them, shown or not: with a stack, showing
// another section could change the dialog's size and move it.
type everyStack struct{}

func (everyStack) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

func (everyStack) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objects {
		m = m.Max(o.MinSize())
	}
	return m
}

// show shows the section s and marks its name in the list.
func (f *Form) show(s *section) {
	for _, o := range f.sections {
		o.nav.Importance = widget.LowImportance
		o.body.Hide()
	}
	s.nav.Importance = widget.HighImportance
	s.body.Show()
	for _, o := range f.sections {
		o.nav.Refresh()
	}
}

// sectionOf is the section that holds obj, or nil.
func (f *Form) sectionOf(obj fyne.CanvasObject) *section {
	for _, s := range f.sections {
		if within(s.scroll.Content, obj) {
			return s
		}
	}
	return nil
}

// within reports whether obj is o or is laid out inside it by the
// dialog's own containers and forms.
func within(o, obj fyne.CanvasObject) bool {
	if o == obj {
		return true
	}
	switch v := o.(type) {
	case *fyne.Container:
		for _, c := range v.Objects {
			if within(c, obj) {
				return true
			}
		}
	case *widget.Form:
		for _, it := range v.Items {
			if within(it.Widget, obj) {
				return true
			}
		}
	}
	return false
}

// fieldError is a problem with one field of the form: Save shows the
// field's section and puts the focus in it.
type fieldError struct {
	field fyne.CanvasObject
	err   error
}

func (e fieldError) Error() string { return e.err.Error() }
func (e fieldError) Unwrap() error { return e.err }

// badField is the error of field, worded by format and a.
func badField(field fyne.CanvasObject, format string, a ...any) error {
	return fieldError{field: field, err: fmt.Errorf(format, a...)}
}

// point shows the section of the field err names, if it names one, and
// puts the focus in that field when it takes it.
func (f *Form) point(err error) {
	var fe fieldError
	if !errors.As(err, &fe) {
		return
	}
	if s := f.sectionOf(fe.field); s != nil {
		f.show(s)
	}
	if fc, ok := fe.field.(fyne.Focusable); ok && f.h.Window != nil {
		f.h.Window.Canvas().Focus(fc)
	}
}

// say shows msg on the problem line; "" hides it.
func (f *Form) say(msg string) {
	f.problem.SetText(msg)
	tw.ShowIf(f.problem, msg != "")
}

// recheck checks the fields again while a problem is said, after one of
// them changed: a fixed problem goes away, another one is said instead.
func (f *Form) recheck() {
	if !f.problem.Visible() {
		return
	}
	_, err := f.values()
	if err != nil {
		f.say(tw.UpperFirst(err.Error()) + ".")
		return
	}
	f.say("")
	if f.resultIsProblem {
		f.result.SetText("")
		f.resultIsProblem = false
	}
}

// watch makes the entries check the form again as they change, after
// what they did on a change before.
func (f *Form) watch(entries ...*widget.Entry) {
	for _, e := range entries {
		was := e.OnChanged
		e.OnChanged = func(s string) {
			if was != nil {
				was(s)
			}
			f.recheck()
		}
	}
}

// growing makes a multi-line entry as tall as its lines, from least to
// most rows: a field that scrolled its own lines took the mouse wheel
// from the dialog.
func growing(e *tw.EscEntry, least, most int) {
	fit := func(s string) { e.SetMinRowsVisible(min(max(strings.Count(s, "\n")+1, least), most)) }
	fit(e.Text)
	was := e.OnChanged
	e.OnChanged = func(s string) {
		fit(s)
		if was != nil {
			was(s)
		}
	}
}

// wheel lies over a section's scrolling area and scrolls it. Fyne gives
// a mouse wheel event to the innermost scrollable object under the
// pointer, and a text field scrolls its own text: over a field, the
// wheel moved nothing. Drawn after the area, the wheel is that object
// wherever the pointer is in it; it takes no taps, drags or hovering,
// which go to what is under it.
type wheel struct {
	widget.BaseWidget
	scroll *container.Scroll
}

func newWheel(s *container.Scroll) *wheel {
	w := &wheel{scroll: s}
	w.ExtendBaseWidget(w)
	return w
}

// Scrolled implements fyne.Scrollable: it scrolls the area under it.
func (w *wheel) Scrolled(ev *fyne.ScrollEvent) { w.scroll.Scrolled(ev) }

// CreateRenderer implements fyne.Widget: the wheel draws nothing.
func (w *wheel) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(&fyne.Container{})
}

// withRoom keeps room for lines lines of the label l, so that what it
// comes to say (up to that many lines) moves nothing under it.
func withRoom(lines int, l *widget.Label) fyne.CanvasObject {
	return container.New(roomLayout{lines: lines, label: l}, l)
}

// roomLayout lays out a label at least lines lines high.
type roomLayout struct {
	lines int
	label *widget.Label
}

func (r roomLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

func (r roomLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	m := r.label.MinSize()
	th := r.label.Theme()
	size := r.label.SizeName
	if size == "" {
		size = theme.SizeNameText
	}
	line := fyne.MeasureText("M", th.Size(size), r.label.TextStyle).Height
	m.Height = max(m.Height, line*float32(r.lines)+2*th.Size(theme.SizeNameInnerPadding))
	return m
}

// caption is a small grey line of text that wraps.
func caption(s string) *widget.Label {
	return &widget.Label{Text: s, Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
}
