package settings

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// sectionRows are the rows each section of the dialog shows, in the
// order of the list on its left.
var sectionRows = []struct {
	name string
	rows []string
}{
	{"Connection", []string{"Base URL", "Model", "API key", "Timeouts"}},
	{"Models and profiles", []string{"Context window", "Images", "Endpoint profiles"}},
	{"Safety", []string{"New sessions", "Command variables", "Shared caches", "Secret files", "Local pages"}},
	{"Context and cost", []string{"Prices", "Compaction", "Keep the context under", "New cycle at", "Cache warm-up", "Memory", "Cache rule", "Status placement"}},
	{"Extensions", []string{"MCP servers", "Hooks", "Language servers"}},
	{"Appearance", []string{"Theme", "Notifications"}},
}

// openAt opens the dialog in a window of the given size, laid out as the
// next frame would be.
func (h *harness) openAt(w, ht float32) *Form {
	h.t.Helper()
	h.win.Resize(fyne.NewSize(w, ht))
	f := h.open()
	h.layout()
	return f
}

// layout lays the dialogs out as the next frame would.
func (h *harness) layout() {
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetest.LayoutAll(o)
	}
}

// showSection taps the section's name in the list on the dialog's left;
// it reports whether there was one.
func (h *harness) showSection(name string) bool {
	b := fynetest.Button(h.win.Canvas().Overlays().Top(), name)
	if b == nil {
		return false
	}
	test.Tap(b)
	h.layout()
	return true
}

// walkShown visits what the topmost dialog shows, skipping what is hidden.
func (h *harness) walkShown(visit func(fyne.CanvasObject)) {
	fynetest.Walk(h.win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if !o.Visible() {
			return false
		}
		visit(o)
		return true
	})
}

// shownRows are the labels of the form rows the dialog shows.
func (h *harness) shownRows() []string {
	var out []string
	h.walkShown(func(o fyne.CanvasObject) {
		if f, ok := o.(*widget.Form); ok {
			for _, it := range f.Items {
				if it.Text != "" {
					out = append(out, it.Text)
				}
			}
		}
	})
	return out
}

// scrollOf is the shown scrolling area that holds obj, or nil.
func (h *harness) scrollOf(obj fyne.CanvasObject) *container.Scroll {
	var found *container.Scroll
	h.walkShown(func(o fyne.CanvasObject) {
		if s, ok := o.(*container.Scroll); ok && found == nil && holds(s.Content, obj) {
			found = s
		}
	})
	return found
}

func absPos(o fyne.CanvasObject) fyne.Position {
	return fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
}

// The settings are grouped in sections listed on the dialog's left; each
// shows its own rows, and every setting is in one of them.
func TestSettingsAreGroupedInSections(t *testing.T) {
	h := newHarness(t, endpointEnv)
	test.ApplyTheme(t, tw.ThemeFor("")) // the window's fonts and sizes
	h.openAt(960, 600)
	box := dialogOf(h.win.Canvas().Overlays().Top())
	size, at := box.Size(), box.Position()
	for _, s := range sectionRows {
		if !h.showSection(s.name) {
			t.Fatalf("the dialog lists no section %q", s.name)
		}
		if got := h.shownRows(); !slices.Equal(got, s.rows) {
			t.Errorf("%s shows the rows %q; want %q", s.name, got, s.rows)
		}
		// Showing a section neither resizes nor moves the dialog, and no
		// section is wider than the dialog is made.
		if box.Size() != size || box.Position() != at || box.MinSize().Width >= size.Width {
			t.Errorf("%s: the dialog is %v at %v (at least %v); it was %v at %v", s.name, box.Size(), box.Position(), box.MinSize(), size, at)
		}
	}
}

// The mouse wheel did not scroll the dialog while the pointer was over a
// text field: the field took the wheel for its own text.
func TestSettingsWheelScrollsOverATextField(t *testing.T) {
	h := newHarness(t, endpointEnv)
	f := h.openAt(960, 600)
	h.showSection("Safety")
	for _, e := range []fyne.CanvasObject{f.safety.shellEnv, f.safety.caches, f.safety.secrets} {
		s := h.scrollOf(e)
		if s == nil {
			t.Fatal("the field is not in a scrolling area")
		}
		if s.Size().Height >= s.Content.MinSize().Height {
			t.Fatalf("the section fits without scrolling (%v in %v); the test proves nothing", s.Content.MinSize().Height, s.Size())
		}
		// Bring the field into view, halfway down the area.
		s.Offset.Y = max(0, min(absPos(e).Y-absPos(s.Content).Y-s.Size().Height/2, s.Content.MinSize().Height-s.Size().Height))
		s.Refresh()
		h.layout()
		before := s.Offset.Y
		dy := float32(-40) // down
		if before > 0 {
			dy = 40
		}
		test.Scroll(h.win.Canvas(), absPos(e).AddXY(10, 10), 0, dy)
		if s.Offset.Y == before {
			t.Errorf("the wheel over the field at %v did not scroll the dialog (offset %v)", absPos(e), s.Offset.Y)
		}
	}
}

// "Test connection" sat some thirty rows under the endpoint, the model
// and the key it tests: it is right under them, seen without scrolling.
func TestSettingsTestConnectionIsUnderTheKey(t *testing.T) {
	h := newHarness(t, endpointEnv)
	for _, size := range []fyne.Size{{Width: 960, Height: 600}, {Width: 1920, Height: 1080}} {
		f := h.openAt(size.Width, size.Height)
		h.showSection("Connection")
		s := h.scrollOf(f.testB)
		if s == nil {
			t.Fatalf("%v: Test connection is not shown", size)
		}
		s.ScrollToTop()
		h.layout()
		b, key, view := absPos(f.testB), absPos(f.apiKey), absPos(s)
		if b.Y < key.Y || b.Y-key.Y > 150 {
			t.Errorf("%v: Test connection is %v px under the key field; want it right under", size, b.Y-key.Y)
		}
		if b.Y+f.testB.Size().Height > view.Y+s.Size().Height {
			t.Errorf("%v: Test connection (at %v) is out of view without scrolling (%v, %v)", size, b, view, s.Size())
		}
		h.win.Canvas().Overlays().Remove(h.win.Canvas().Overlays().Top())
	}
}

// The "not an http(s) URL" line stayed after the URL was fixed: the
// fields are checked again as they change.
func TestSettingsProblemClearsWhenFixed(t *testing.T) {
	h := newHarness(t, endpointEnv)
	f := h.openAt(960, 600)
	f.baseURL.SetText("not a url")
	if f.save() {
		t.Fatal("a bad base URL was saved")
	}
	if !h.overlayShows("not an http(s) URL") {
		t.Fatal("the bad base URL is not explained")
	}
	f.baseURL.SetText("http://localhost:8000/v")
	f.baseURL.SetText("http://localhost:8000/v1")
	if h.overlayShows("not an http(s) URL") {
		t.Error(`"not an http(s) URL" is still shown after the URL was fixed`)
	}
	// With two problems, fixing the one said says the other.
	f.window.SetText("lots")
	f.baseURL.SetText("still not a url")
	if f.save() || !h.overlayShows("context window") {
		t.Fatal("a bad context window was saved or not explained")
	}
	f.window.SetText("")
	if h.overlayShows("context window") || !h.overlayShows("not an http(s) URL") {
		t.Error("the remaining problem is not said in place of the fixed one")
	}
	f.baseURL.SetText("http://localhost:8000/v1")
	if h.overlayShows("not an http(s) URL") || h.overlayShows("is not a number of tokens") {
		t.Error("a fixed problem is still said")
	}
	if !f.save() {
		t.Error("the fixed settings were refused")
	}
}

// At 1920×1080 the dialog stayed 700×680: it takes most of the window,
// and still fits a 960×600 one.
func TestSettingsDialogSizeFollowsTheWindow(t *testing.T) {
	h := newHarness(t, endpointEnv)
	for _, c := range []struct{ win, least fyne.Size }{
		{fyne.NewSize(960, 600), fyne.NewSize(880, 540)},
		{fyne.NewSize(1920, 1080), fyne.NewSize(1150, 820)},
	} {
		h.openAt(c.win.Width, c.win.Height)
		top := h.win.Canvas().Overlays().Top()
		size := dialogOf(top).Size()
		if size.Width < c.least.Width || size.Height < c.least.Height {
			t.Errorf("in %v the dialog is %v; want at least %v", c.win, size, c.least)
		}
		if size.Width > c.win.Width || size.Height > c.win.Height {
			t.Errorf("in %v the dialog is %v, larger than the window", c.win, size)
		}
		h.win.Canvas().Overlays().Remove(top)
	}
}

// dialogOf is the dialog's box in its pop-up: the pop-up itself covers
// the whole window.
func dialogOf(top fyne.CanvasObject) fyne.CanvasObject {
	if p, ok := top.(*widget.PopUp); ok {
		return p.Content
	}
	return top
}

// Placeholders were cut at 960×600: the shared caches, the secret files
// and a saved key's. Every shown placeholder fits its field on one line.
func TestSettingsPlaceholdersFit(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "TALLY_MODEL": "test-model"})
	test.ApplyTheme(t, tw.ThemeFor("")) // the window's fonts and sizes
	s := h.wb.Settings()
	s.APIKey = "sk-saved-0123456789abcdefSECRET"
	if err := h.wb.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	h.openAt(960, 600)
	for _, sec := range sectionRows {
		h.showSection(sec.name)
		h.walkShown(func(o fyne.CanvasObject) {
			var e *widget.Entry
			switch v := o.(type) {
			case *tw.EscEntry:
				e = &v.Entry
			case *widget.Entry:
				e = v
			}
			if e == nil || e.PlaceHolder == "" {
				return
			}
			th := e.Theme()
			room := e.Size().Width - 2*th.Size(theme.SizeNameInnerPadding) - 2*th.Size(theme.SizeNameInputBorder)
			if e.Password {
				room -= th.Size(theme.SizeNameInlineIcon) + th.Size(theme.SizeNameLineSpacing)
			}
			if w := fyne.MeasureText(e.PlaceHolder, th.Size(theme.SizeNameText), e.TextStyle).Width; w > room {
				t.Errorf("%s: the placeholder %q (%.0f px) is cut in its %.0f px field", sec.name, e.PlaceHolder, w, room)
			}
		})
	}
}

// A problem said under a form moved the fields (Save's line pushed them
// down; in the small edit dialogs the dialog grew and was centred again),
// so a click aimed at a field landed on another.
func TestSettingsProblemsDoNotMoveTheFields(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := newHarness(t, endpointEnv)
	f := h.openAt(960, 600)
	h.waitFor("the language servers", func() bool { return !f.lsp.add.Disabled() })
	h.showSection("Connection")
	fields := []fyne.CanvasObject{f.baseURL, f.model, f.apiKey}
	where := func() []fyne.Position {
		h.layout()
		var out []fyne.Position
		for _, o := range fields {
			out = append(out, absPos(o))
		}
		return out
	}
	before := where()
	f.baseURL.SetText("not a url")
	if f.save() {
		t.Fatal("a bad base URL was saved")
	}
	if got := where(); !slices.Equal(got, before) || !h.overlayShows("not an http(s) URL") {
		t.Errorf("Save's problem moved the fields from %v to %v", before, got)
	}
	f.baseURL.SetText("http://localhost:8000/v1")
	if got := where(); !slices.Equal(got, before) {
		t.Errorf("clearing the problem moved the fields from %v to %v", before, got)
	}

	// What Test connection found (two lines at this size) is said next
	// to it without moving the timeouts under it.
	f.baseURL.SetText(endpointEnv["OPENAI_BASE_URL"])
	fields = []fyne.CanvasObject{f.safety.connect, f.safety.idle}
	before = where()
	test.Tap(f.testB)
	h.waitFor("the test's result", func() bool { return strings.HasPrefix(f.result.Text, "Unreachable") })
	if got := where(); !slices.Equal(got, before) {
		t.Errorf("the test's result %q moved the timeouts from %v to %v", f.result.Text, before, got)
	}

	// The language-server form says its problem under the fields.
	h.showSection("Extensions")
	test.Tap(f.lsp.add)
	h.layout()
	name := h.entryWith("zls")
	fields = []fyne.CanvasObject{name, h.entryWith("zls, or /path/to/server"), h.entryWith(".zig, .zon")}
	before = where()
	test.Type(name, "zls")
	name.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !h.overlayShows("has no command") {
		t.Fatal("the form did not say what is wrong")
	}
	if got := where(); !slices.Equal(got, before) {
		t.Errorf("the form's problem moved its fields from %v to %v", before, got)
	}
	test.Type(h.entryWith("zls, or /path/to/server"), "z")
	if got := where(); !slices.Equal(got, before) || h.overlayShows("has no command") {
		t.Errorf("typing cleared the problem and moved the fields from %v to %v", before, got)
	}
}
