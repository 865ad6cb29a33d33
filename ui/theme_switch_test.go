package ui

import (
	"fmt"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// Switching the theme from Dark to Light while the app ran left every
// "You" card a dark block with the light theme's dark text on it, until
// a restart (issue 33 #2): the cards, those in view and those the list
// keeps off screen, take their colours from the theme in use.
func TestThemeSwitchRedrawsEveryYouCard(t *testing.T) {
	h := silentSession(t)
	h.win.Resize(fyne.NewSize(960, 600))
	h.ui.settings.Theme = "dark"
	h.ui.applyTheme()
	var its []*chat.Item
	for i := range 30 {
		its = append(its, &chat.Item{Kind: chat.ItemUser, Text: fmt.Sprintf("question %d", i), LogIndex: -1},
			&chat.Item{Kind: chat.ItemAssistant, Text: "An answer:\n\n- one point\n- another", LogIndex: -1})
	}
	h.ui.chat.AppendItems(its...)
	settle := func() {
		h.q.drain()
		fynetest.LayoutAll(h.win.Canvas().Content())
		h.q.drain()
	}
	settle()
	// Scroll through, so the list keeps rows made under the dark theme
	// off screen for later.
	h.ui.chat.List.ScrollToTop()
	settle()
	h.ui.chat.List.ScrollToBottom()
	settle()

	h.ui.settings.Theme = "light" // as Settings → Theme → Light → Save
	h.ui.applyTheme()
	settle()
	if v := fyne.CurrentApp().Settings().Theme().Color(theme.ColorNameBackground, 0); luminance(v) < 0.5 {
		t.Fatal("the light theme is not in use")
	}
	check := func(where string) {
		t.Helper()
		cards := 0
		fynetest.Walk(h.win.Canvas().Content(), func(o fyne.CanvasObject) bool {
			if !o.Visible() {
				return false
			}
			r, ok := o.(*chat.MessageRow)
			if !ok || r.Item == nil {
				return true
			}
			bg := rowBackground(r)
			if r.Item.Kind == chat.ItemUser {
				cards++
				if want := theme.Color(theme.ColorNameInputBackground); !sameColor(bg.FillColor, want) {
					t.Errorf("%s: the card of %q is filled %v; want the light theme's %v", where, r.Item.Text, bg.FillColor, want)
				}
				if you := textIn(r, "You"); you == nil {
					t.Errorf("%s: the card of %q shows no \"You\"", where, r.Item.Text)
				} else if c := contrastOf(you.Color, bg.FillColor); c < 4.5 {
					t.Errorf("%s: \"You\" on the card of %q has a contrast of %.1f:1", where, r.Item.Text, c)
				}
			}
			if mark := textIn(r, "•"); mark != nil {
				if c := contrastOf(mark.Color, theme.Color(theme.ColorNameBackground)); c < 4.5 {
					t.Errorf("%s: a list marker of an answer has a contrast of %.1f:1", where, c)
				}
			}
			return false
		})
		if cards == 0 {
			t.Fatalf("%s: no card of the user's shown", where)
		}
	}
	check("at the bottom")
	h.ui.chat.List.ScrollToTop()
	settle()
	check("scrolled to the top")
}

// rowBackground is the rectangle a chat row is drawn on.
func rowBackground(r *chat.MessageRow) *canvas.Rectangle {
	return fynetest.Find(r, func(*canvas.Rectangle) bool { return true })
}

// textIn is the first text s drawn in o, or nil.
func textIn(o fyne.CanvasObject, s string) *canvas.Text {
	return fynetest.Find(o, func(t *canvas.Text) bool { return t.Text == s })
}

// luminance is a colour's relative luminance (WCAG 2.x).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// contrastOf is the WCAG contrast ratio of fg on the opaque bg.
func contrastOf(fg, bg color.Color) float64 {
	l1, l2 := luminance(fg), luminance(bg)
	if l1 < l2 {
		l1, l2 = l2, l1
	}
	return (l1 + 0.05) / (l2 + 0.05)
}
