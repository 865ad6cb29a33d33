// Package fynetest holds the helpers the ui tests and those of its views
// share: walking what a canvas draws, comparing a window with golden
// markup under testdata/golden/, and a sample compaction plan. It is meant to be imported by tests only.
//
// Updating the goldens after an intended change:
//
//	go test ./ui/... -run Golden
//
// fails and writes the new markup to testdata/failed/golden/<name>.xml
// next to the test (git-ignored). Review it, then copy it over and clean
// up:
//
//	diff -ru testdata/golden testdata/failed/golden
//	cp testdata/failed/golden/*.xml testdata/golden/ && rm -r testdata/failed
//
// A new golden is made the same way: the first run fails with "Master not
// found" and writes the file under testdata/failed/golden/. Goldens are
// compared byte for byte and use tabs for indentation; edit them only by
// copying.
package fynetest

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Walk visits o and everything drawn inside it (container children,
// scroll content, the objects of widget renderers), depth first. visit
// returns false to skip what is inside o.
func Walk(o fyne.CanvasObject, visit func(fyne.CanvasObject) bool) {
	if o == nil || !visit(o) {
		return
	}
	switch v := o.(type) {
	case *fyne.Container:
		for _, c := range v.Objects {
			Walk(c, visit)
		}
	case *container.Scroll:
		Walk(v.Content, visit)
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(v).Objects() {
			Walk(c, visit)
		}
	}
}

// goldenTheme is Fyne's test theme with the default theme's font rule
// for monospace text: one face whatever the weight or slant. The test
// theme defines no bold monospace face (tool card titles use it), and
// measuring text in a missing face crashes the test driver.
type goldenTheme struct{ fyne.Theme }

// Font implements fyne.Theme.
func (t goldenTheme) Font(s fyne.TextStyle) fyne.Resource {
	if s.Monospace {
		s = fyne.TextStyle{Monospace: true}
	}
	return t.Theme.Font(s)
}

// GoldenApp starts a test app under Fyne's test theme (see goldenTheme),
// so rendered markup does not depend on the machine; build views after
// it so they take the theme's colours.
func GoldenApp(t *testing.T) {
	t.Helper()
	test.NewTempApp(t)
	test.ApplyTheme(t, goldenTheme{test.Theme()})
}

// Window opens a test window of a fixed size showing content; it closes
// when the test ends.
func Window(t *testing.T, content fyne.CanvasObject, w, h float32) fyne.Window {
	t.Helper()
	win := test.NewTempWindow(t, content)
	win.Resize(fyne.NewSize(w, h))
	return win
}

// AssertGolden lays the window out as the desktop driver would have by
// the next frame and compares its canvas, overlays included, with
// testdata/golden/<name>.xml.
func AssertGolden(t *testing.T, win fyne.Window, name string) {
	t.Helper()
	c := win.Canvas()
	LayoutAll(c.Content())
	for _, o := range c.Overlays().List() {
		LayoutAll(o)
	}
	test.AssertRendersToMarkup(t, "golden/"+name+".xml", c)
}

// LayoutAll lays out every visible container and widget under o again,
// parents first. The desktop driver does this on the next frame for any
// parent whose child changed its minimum size (a chat row hiding the parts
// it does not use, a label getting its text); the test canvas only lays
// out on a resize, so without it the markup would show stale positions.
func LayoutAll(o fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	switch v := o.(type) {
	case *fyne.Container:
		if v.Layout != nil {
			v.Layout.Layout(v.Objects, v.Size())
		}
		for _, c := range v.Objects {
			LayoutAll(c)
		}
	case fyne.Widget:
		r := test.WidgetRenderer(v)
		r.Layout(v.Size())
		for _, c := range r.Objects() {
			LayoutAll(c)
		}
	}
}

// Find returns the first visible T drawn under o (see Walk) that match
// accepts, or T's zero value; a nil match accepts any.
func Find[T fyne.CanvasObject](o fyne.CanvasObject, match func(T) bool) T {
	var found T
	done := false
	Walk(o, func(c fyne.CanvasObject) bool {
		if done || !c.Visible() {
			return false
		}
		if v, ok := c.(T); ok && (match == nil || match(v)) {
			found, done = v, true
		}
		return !done
	})
	return found
}

// Button returns the first visible button labelled text drawn under o,
// or nil.
func Button(o fyne.CanvasObject, text string) *widget.Button {
	return Find(o, func(b *widget.Button) bool { return b.Text == text })
}
