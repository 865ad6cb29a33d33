package settings

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Everything below the build caches (the deny list, the timeouts, Test
// connection) was out of reach: the form did not scroll, and at 960×600
// the dialog was larger than the window. Each section scrolls to its
// last row.
func TestSettingsCannotScrollToTestConnection(t *testing.T) {
	h := newHarness(t, endpointEnv)
	for _, size := range []fyne.Size{{Width: 960, Height: 600}, {Width: 1920, Height: 1080}} {
		f := h.openAt(size.Width, size.Height)
		top := h.win.Canvas().Overlays().Top()
		if d := top.Size(); d.Width > size.Width || d.Height > size.Height {
			t.Errorf("%v: the dialog is %v, larger than the window", size, d)
		}
		for _, s := range f.sections {
			h.showSection(s.name)
			last := s.form.Items[len(s.form.Items)-1].Widget
			s.scroll.ScrollToBottom()
			h.layout()
			pos, view := absPos(last), absPos(s.scroll)
			if pos.Y < view.Y || pos.Y+last.Size().Height > view.Y+s.scroll.Size().Height+1 {
				t.Errorf("%v: scrolled to the bottom, the last row of %s (at %v) is not in the visible area (%v, %v)", size, s.name, pos, view, s.scroll.Size())
			}
		}
		h.win.Canvas().Overlays().Remove(top)
	}
}

// Save with a bad base URL seemed to do nothing: the error was written
// below the fold.
func TestSettingsBadBaseURLFailsSilently(t *testing.T) {
	h := newHarness(t, endpointEnv)
	h.win.Resize(fyne.NewSize(960, 600))
	f := h.open()
	f.baseURL.SetText("not a url")
	if f.save() {
		t.Fatal("a bad base URL was saved")
	}
	if !f.problem.Visible() || !strings.Contains(f.problem.Text, "base URL") {
		t.Errorf("the error is not shown above the fields: visible %v, %q", f.problem.Visible(), f.problem.Text)
	}
	for _, sec := range f.sections {
		if holds(sec.scroll.Content, f.problem) {
			t.Error("the error scrolls away with the fields")
		}
	}
}

// endpointEnv is an environment with a model endpoint configured.
var endpointEnv = map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "dummy", "TALLY_MODEL": "test-model"}

// holds reports whether o is obj or contains it.
func holds(o, obj fyne.CanvasObject) bool {
	if o == obj {
		return true
	}
	switch c := o.(type) {
	case *fyne.Container:
		for _, k := range c.Objects {
			if holds(k, obj) {
				return true
			}
		}
	case fyne.Widget:
		if _, ok := o.(*widget.Label); ok {
			return false
		}
		r := test.WidgetRenderer(c)
		for _, k := range r.Objects() {
			if holds(k, obj) {
				return true
			}
		}
	}
	return false
}
