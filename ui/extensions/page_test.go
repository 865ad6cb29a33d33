package extensions

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

var signinPage = mcp.Form{Server: "tracker", Message: "Sign in to the tracker.", URL: "https://tracker.example.com/oauth/start?state=x1", ElicitationID: "el-1"}

// labelsOf returns the text of every label under o.
func labelsOf(o fyne.CanvasObject) string {
	var b strings.Builder
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if l, ok := c.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
		return true
	})
	return b.String()
}

// A page shows its whole URL and its host and opens nothing until "Open
// in browser", which opens it and accepts; a browser that cannot be
// opened says so and keeps the dialog.
func TestPageDialogOpensOnlyWhenAsked(t *testing.T) {
	var opened []string
	fail := false
	openURL = func(u *url.URL) error {
		if fail {
			return errors.New("no browser")
		}
		opened = append(opened, u.String())
		return nil
	}
	t.Cleanup(func() { openURL = func(u *url.URL) error { return fyne.CurrentApp().OpenURL(u) } })
	d, win, got := openForm(t, signinPage, 960, 600)
	top := win.Canvas().Overlays().Top()
	shown := labelsOf(top)
	for _, want := range []string{signinPage.URL, "Host: tracker.example.com", "Sign in to the tracker.", `"tracker" asks you to open a page`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the dialog does not show %q; it shows:\n%s", want, shown)
		}
	}
	if len(opened) != 0 || *got != nil {
		t.Fatal("the page opened or answered before the user asked")
	}
	fynetest.LayoutAll(top)
	at, size := fyne.CurrentApp().Driver().AbsolutePositionForObject(d.accept), d.accept.Size()
	if at.X+size.Width > 960 || at.Y+size.Height > 600 {
		t.Errorf("the Open button is drawn at %v (%v), outside the 960×600 window", at, size)
	}
	fail = true
	test.Tap(fynetest.Button(top, "Open in browser"))
	if *got != nil || !d.problem.Visible() || !strings.Contains(d.problem.Text, "no browser") {
		t.Fatalf("a browser that failed gave %+v and %q", *got, d.problem.Text)
	}
	fail = false
	test.Tap(fynetest.Button(top, "Open in browser"))
	if *got == nil || (*got).Action != mcp.ActionAccept || len(opened) != 1 || opened[0] != signinPage.URL {
		t.Fatalf("Open gave %+v and opened %v", *got, opened)
	}
	_, win, got = openForm(t, signinPage, 960, 600)
	test.Tap(fynetest.Button(win.Canvas().Overlays().Top(), "Decline"))
	if *got == nil || (*got).Action != mcp.ActionDecline || len(opened) != 1 {
		t.Fatalf("Decline gave %+v and opened %v", *got, opened)
	}
}
