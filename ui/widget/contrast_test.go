package widget

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

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

// over paints c (possibly translucent) on the opaque colour bg.
func over(c, bg color.Color) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	b := color.NRGBAModel.Convert(bg).(color.NRGBA)
	a := float64(n.A) / 255
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*a + float64(y)*(1-a))) }
	return color.NRGBA{R: mix(n.R, b.R), G: mix(n.G, b.G), B: mix(n.B, b.B), A: 255}
}

// contrast is the WCAG contrast ratio of text colour fg on bg.
func contrast(fg, bg color.Color) float64 {
	l1, l2 := luminance(over(fg, bg)), luminance(bg)
	if l1 < l2 {
		l1, l2 = l2, l1
	}
	return (l1 + 0.05) / (l2 + 0.05)
}

// Grey status lines on the light theme were hard to read: every colour
// the window writes text in reaches WCAG AA (4.5:1) on the backgrounds it
// is written on, in both variants.
func TestThemeTextContrast(t *testing.T) {
	test.NewTempApp(t)
	type pair struct{ fg, bg fyne.ThemeColorName }
	var pairs []pair
	for _, fg := range []fyne.ThemeColorName{theme.ColorNameForeground, theme.ColorNameDisabled, theme.ColorNamePlaceHolder,
		theme.ColorNamePrimary, theme.ColorNameHyperlink, theme.ColorNameError, theme.ColorNameWarning, theme.ColorNameSuccess} {
		for _, bg := range []fyne.ThemeColorName{theme.ColorNameBackground, theme.ColorNameOverlayBackground, theme.ColorNameInputBackground} {
			pairs = append(pairs, pair{fg, bg})
		}
	}
	pairs = append(pairs, pair{theme.ColorNameForegroundOnPrimary, theme.ColorNamePrimary},
		pair{theme.ColorNameForegroundOnError, theme.ColorNameError},
		pair{theme.ColorNameForegroundOnSuccess, theme.ColorNameSuccess},
		pair{theme.ColorNameForegroundOnWarning, theme.ColorNameWarning})
	for _, name := range []string{"light", "dark"} {
		th := ThemeFor(name)
		for _, p := range pairs {
			bg := over(th.Color(p.bg, 0), th.Color(theme.ColorNameBackground, 0))
			if r := contrast(th.Color(p.fg, 0), bg); r < 4.5 {
				t.Errorf("%s: %s on %s is %.2f:1; want at least 4.5:1", name, p.fg, p.bg, r)
			}
		}
	}
}
