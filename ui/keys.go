package ui

import (
	"fmt"
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	tw "github.com/tally-dev/tally/ui/widget"
)

// The two preferences of the keyboard sheet (F1): whether Enter sends the
// prompt, and the size of the app's text. Both are saved with the
// settings; the Settings dialog leaves them as they are.

// applyKeys makes the prompt box follow the saved choice for Enter and
// says under Send which key sends.
func (u *UI) applyKeys() {
	u.input.prompt.EnterNewline = u.settings.EnterNewline
	if u.settings.EnterNewline {
		u.input.hint.SetText("Ctrl+Enter sends")
	} else {
		u.input.hint.SetText("Enter sends")
	}
}

// setEnterNewline chooses whether Enter starts a new line in the prompt
// (on) or sends it (off), and saves the choice.
func (u *UI) setEnterNewline(on bool) {
	if u.settings.EnterNewline == on {
		return
	}
	u.settings.EnterNewline = on
	u.applyKeys()
	u.savePreferences()
}

// textScale is the scale the text is drawn at, 1 when none was chosen.
func (u *UI) textScale() float64 {
	if s := u.settings.TextScale; s > 0 {
		return s
	}
	return 1
}

// zoomText makes the text a step larger (up) or smaller.
func (u *UI) zoomText(up bool) { u.setTextScale(tw.NextTextScale(u.textScale(), up)) }

// setTextScale draws the app's text at scale s (1: the theme's size) and
// saves it.
func (u *UI) setTextScale(s float64) {
	if math.Abs(s-u.textScale()) < 0.001 {
		return
	}
	if math.Abs(s-1) < 0.001 {
		s = 0 // the default, stored as absent
	}
	u.settings.TextScale = s
	u.applyTheme()
	if u.scaleLabel != nil {
		u.scaleLabel.SetText(scaleText(u.textScale()))
	}
	u.savePreferences()
}

// scaleText is a text scale as a percentage: "110 %".
func scaleText(s float64) string { return fmt.Sprintf("%.0f %%", s*100) }

// preferenceSaveDelay is how long the keyboard's preferences wait before
// they are saved, so a run of Ctrl+= is saved once.
const preferenceSaveDelay = 400 * time.Millisecond

// savePreferences saves the settings once the preferences stop changing;
// closing the window saves them too (see keepPlace).
func (u *UI) savePreferences() {
	u.prefGen++
	gen := u.prefGen
	u.bridge.After(preferenceSaveDelay, func() {
		if gen == u.prefGen && !u.closed {
			u.saveSettings(u.settings)
		}
	})
}

// preferencesView is the top of the keyboard sheet: whether Enter sends,
// and the text size with its buttons.
func (u *UI) preferencesView() fyne.CanvasObject {
	enter := widget.NewCheck("Enter sends the prompt (Shift+Enter starts a new line)", func(on bool) { u.setEnterNewline(!on) })
	enter.SetChecked(!u.settings.EnterNewline)
	u.scaleLabel = &widget.Label{Text: scaleText(u.textScale()), Alignment: fyne.TextAlignCenter}
	smaller := &widget.Button{Text: "Smaller", Icon: theme.ZoomOutIcon(), OnTapped: func() { u.zoomText(false) }}
	larger := &widget.Button{Text: "Larger", Icon: theme.ZoomInIcon(), OnTapped: func() { u.zoomText(true) }}
	reset := &widget.Button{Text: "Normal size", OnTapped: func() { u.setTextScale(1) }}
	size := container.NewHBox(widget.NewLabel("Text size"), smaller, u.scaleLabel, larger, reset)
	return container.NewVBox(enter, size, widget.NewSeparator())
}
