package extensions

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The MCP servers dialog's command field showed a cut placeholder in a
// 960×600 window.
func TestMCPServersPlaceholdersFit(t *testing.T) {
	h := newHarness(t)
	test.ApplyTheme(t, tw.ThemeFor("")) // the window's fonts and sizes
	h.win.Resize(fyne.NewSize(960, 600))
	v := h.showMCPServers()
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetest.LayoutAll(o)
	}
	for _, e := range []*tw.EscEntry{v.name, v.command} {
		th := e.Theme()
		room := e.Size().Width - 2*th.Size(theme.SizeNameInnerPadding) - 2*th.Size(theme.SizeNameInputBorder)
		if w := fyne.MeasureText(e.PlaceHolder, th.Size(theme.SizeNameText), e.TextStyle).Width; w > room {
			t.Errorf("the placeholder %q (%.0f px) is cut in its %.0f px field", e.PlaceHolder, w, room)
		}
	}
}

// Typing in a field whose answer was wrong hid the red line under it, so
// the fields under it moved up as the pointer went to one of them.
func TestFormDialogFieldsStayPutAsAnswersAreFixed(t *testing.T) {
	d, win, _ := openForm(t, profileForm(t, 0), 960, 600)
	in := map[string]*formInput{}
	for _, i := range d.inputs {
		in[i.field.Name] = i
	}
	at := func(o fyne.CanvasObject) fyne.Position {
		for _, ov := range win.Canvas().Overlays().List() {
			fynetest.LayoutAll(ov)
		}
		return fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	}
	test.Type(in["age"].entry, "x")
	test.Tap(d.accept)
	if !in["age"].wrong.Visible() || in["age"].wrong.Text == "" {
		t.Fatal("the wrong age is not explained")
	}
	before := at(in["name"].entry)
	in["age"].entry.SetText("42")
	if in["age"].wrong.Visible() && in["age"].wrong.Text != "" {
		t.Errorf("the line %q stayed after the age was changed", in["age"].wrong.Text)
	}
	if got := at(in["name"].entry); got != before {
		t.Errorf("fixing the age moved the name field from %v to %v", before, got)
	}
}
