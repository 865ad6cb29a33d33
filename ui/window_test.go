package ui

import (
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	tw "github.com/tally-dev/tally/ui/widget"
)

// The window could not shrink below about 1,080 px (issue 12 #16): at
// 960×600 the session list folds into its toggle and everything fits.
func TestSmallWindowFoldsTheSessionList(t *testing.T) {
	h := newHarness(t, map[string]string{})
	h.newSession()
	h.win.Resize(fyne.NewSize(960, 600))
	h.q.drain()
	if h.ui.panels.showLeft {
		t.Error("the session list still takes room at 960 px")
	}
	if min := h.win.Content().MinSize(); min.Width > 960 || min.Height > 600 {
		t.Errorf("the window needs at least %v", min)
	}
	test.Tap(h.ui.panels.leftB)
	if !h.ui.panels.showLeft {
		t.Error("the toggle did not show the session list")
	}
	test.Tap(h.ui.panels.rightB)
	if h.ui.panels.showRight {
		t.Error("the toggle did not hide the side panel")
	}
	if min := h.win.Content().MinSize(); min.Width > 960 {
		t.Errorf("with the list shown and the panel hidden the window needs %v", min)
	}
	h.win.Resize(fyne.NewSize(1400, 800))
	h.q.drain()
	if !h.ui.panels.showLeft {
		t.Error("a width change overrode the user's choice")
	}
}

// The window forgot its size on relaunch (issue 12 #16).
func TestWindowSizeIsRemembered(t *testing.T) {
	h := newHarness(t, map[string]string{})
	h.newSession()
	h.win.Resize(fyne.NewSize(1010, 690))
	h.ui.Close()
	h2 := reopen(t, h)
	if got := h2.ui.windowSize(); got != fyne.NewSize(1010, 690) {
		t.Errorf("relaunched at %v, want 1010x690", got)
	}
}

// The folder picker opened at the home folder instead of the folder
// already filled in (issue 12 #16).
func TestFolderPickerStartsAtTheTypedFolder(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	if l := pickerStart(dir); l == nil || l.Path() != dir {
		t.Errorf("picker starts at %v, want %s", l, dir)
	}
	if l := pickerStart(filepath.Join(dir, "not", "yet")); l == nil || l.Path() != dir {
		t.Errorf("for a folder not created yet the picker starts at %v, want its parent %s", l, dir)
	}
	if pickerStart("relative/path") != nil || pickerStart("") != nil {
		t.Error("a relative or empty path gave a start folder")
	}
	_ = os.Remove(dir)
}

// Keyboard focus on the primary button was invisible (issue 12 #16): the
// focus colour was the primary colour itself.
func TestFocusShowsOnThePrimaryButton(t *testing.T) {
	for _, name := range []string{"light", "dark"} {
		a := test.NewTempApp(t)
		a.Settings().SetTheme(tw.ThemeFor(name))
		th := a.Settings().Theme()
		v := a.Settings().ThemeVariant()
		if sameColor(th.Color(theme.ColorNameFocus, v), th.Color(theme.ColorNamePrimary, v)) {
			t.Errorf("%s: the focus colour is the primary colour", name)
		}
		b := &widget.Button{Text: "Send", Importance: widget.HighImportance}
		w := test.NewTempWindow(t, b)
		plain := fillOf(b)
		w.Canvas().Focus(b)
		if sameColor(fillOf(b), plain) {
			t.Errorf("%s: a focused primary button looks like an unfocused one", name)
		}
	}
}

// fillOf is the colour of a button's background rectangle.
func fillOf(b *widget.Button) color.Color {
	for _, o := range test.WidgetRenderer(b).Objects() {
		if r, ok := o.(*canvas.Rectangle); ok {
			return r.FillColor
		}
	}
	return color.Transparent
}

func sameColor(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// The demo's suggestions scroll sideways instead of widening the window.
func TestDemoFitsTheSmallWindow(t *testing.T) {
	h := newHarness(t, map[string]string{})
	h.ui.startDemo()
	h.waitFor("the demo session", func() bool { return h.ui.live != nil && h.ui.live.sess != nil && h.ui.input.suggestBox.Visible() })
	h.ui.stop()
	h.waitFor("the demo turn to stop", func() bool { return !h.ui.live.job.running })
	h.win.Resize(fyne.NewSize(960, 600))
	h.q.drain()
	if min := h.win.Content().MinSize(); min.Width > 960 || min.Height > 600 {
		t.Errorf("the demo needs at least %v", min)
	}
}
