package widget

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// tallyTheme is the default theme, optionally forced to one variant
// (light or dark) and with its text scaled, with a focus colour that shows
// on every widget. The default focus colour is the primary colour made
// translucent, so the focused primary button (Send, Create, Approve)
// looked exactly like the unfocused one and keyboard users could not see
// where they were.
type tallyTheme struct {
	fyne.Theme
	variant *fyne.ThemeVariant // nil: follow the system
	scale   float32            // the text's size against the default's
}

// scaledSizes are the sizes the text scale applies to: the text's, and
// the icons set in a line of text.
var scaledSizes = map[fyne.ThemeSizeName]bool{
	theme.SizeNameText: true, theme.SizeNameHeadingText: true, theme.SizeNameSubHeadingText: true,
	theme.SizeNameCaptionText: true, theme.SizeNameInlineIcon: true,
}

// Size implements fyne.Theme with the text scaled.
func (t tallyTheme) Size(n fyne.ThemeSizeName) float32 {
	s := t.Theme.Size(n)
	if t.scale > 0 && scaledSizes[n] {
		s *= t.scale
	}
	return s
}

// Color implements fyne.Theme with the forced variant and Tally's focus
// colour.
func (t tallyTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if t.variant != nil {
		v = *t.variant
	}
	if n == theme.ColorNameFocus {
		return focusColor(v)
	}
	if c, ok := readable(n, v); ok {
		return c
	}
	return t.Theme.Color(n, v)
}

// readableLight and readableDark replace the default theme's text colours
// that fall short of WCAG AA (4.5:1) on the window's, the dialogs' and the
// fields' backgrounds — the light theme's grey status lines (the
// "disabled" colour of low-importance labels) above all — and the text
// colours on coloured buttons that fall short on their new fill. Light
// text is darker, so the muted grey still stands apart from it.
var (
	readableLight = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameForeground:          color.NRGBA{R: 0x26, G: 0x26, B: 0x26, A: 0xff},
		theme.ColorNameDisabled:            color.NRGBA{R: 0x6b, G: 0x6b, B: 0x6b, A: 0xff},
		theme.ColorNamePlaceHolder:         color.NRGBA{R: 0x69, G: 0x69, B: 0x69, A: 0xff},
		theme.ColorNamePrimary:             color.NRGBA{R: 0x1f, G: 0x5f, B: 0xd1, A: 0xff},
		theme.ColorNameHyperlink:           color.NRGBA{R: 0x1f, G: 0x5f, B: 0xd1, A: 0xff},
		theme.ColorNameError:               color.NRGBA{R: 0xc6, G: 0x28, B: 0x28, A: 0xff},
		theme.ColorNameWarning:             color.NRGBA{R: 0xa3, G: 0x54, B: 0x00, A: 0xff},
		theme.ColorNameSuccess:             color.NRGBA{R: 0x25, G: 0x7a, B: 0x2a, A: 0xff},
		theme.ColorNameForegroundOnPrimary: color.White,
		theme.ColorNameForegroundOnError:   color.White,
		theme.ColorNameForegroundOnWarning: color.White,
		theme.ColorNameForegroundOnSuccess: color.White,
	}
	readableDark = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameDisabled:            color.NRGBA{R: 0x8e, G: 0x8e, B: 0x8e, A: 0xff},
		theme.ColorNamePrimary:             color.NRGBA{R: 0x5b, G: 0x93, B: 0xff, A: 0xff},
		theme.ColorNameHyperlink:           color.NRGBA{R: 0x5b, G: 0x93, B: 0xff, A: 0xff},
		theme.ColorNameError:               color.NRGBA{R: 0xf6, G: 0x61, B: 0x57, A: 0xff},
		theme.ColorNameForegroundOnPrimary: color.NRGBA{R: 0x17, G: 0x17, B: 0x18, A: 0xff},
	}
)

// readable returns Tally's replacement for colour n of variant v, if any.
func readable(n fyne.ThemeColorName, v fyne.ThemeVariant) (color.Color, bool) {
	m := readableDark
	if v == theme.VariantLight {
		m = readableLight
	}
	c, ok := m[n]
	return c, ok
}

// focusColor contrasts with the primary colour on both variants: white
// over the dark theme, near-black over the light one.
func focusColor(v fyne.ThemeVariant) color.Color {
	if v == theme.VariantLight {
		return color.NRGBA{R: 0x10, G: 0x10, B: 0x30, A: 0x66}
	}
	return color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0x59}
}

// ThemeFor returns Tally's theme for a Settings.Theme value: "light",
// "dark", or anything else to follow the system. Whatever the variant, the
// focus colour contrasts with the primary colour.
func ThemeFor(name string) fyne.Theme { return ScaledTheme(name, 1) }

// TextScales are the steps Ctrl+= and Ctrl+- go through, from the smallest
// to the largest; 1 is the theme's own size.
var TextScales = []float64{0.8, 0.9, 1, 1.1, 1.25, 1.4, 1.6, 1.8, 2}

// NextTextScale returns the step of TextScales after s (up) or before it
// (down), s itself at either end.
func NextTextScale(s float64, up bool) float64 {
	if s <= 0 {
		s = 1
	}
	if up {
		for _, v := range TextScales {
			if v > s+0.001 {
				return v
			}
		}
		return max(s, TextScales[len(TextScales)-1])
	}
	for i := len(TextScales) - 1; i >= 0; i-- {
		if TextScales[i] < s-0.001 {
			return TextScales[i]
		}
	}
	return min(s, TextScales[0])
}

// ScaledTheme is ThemeFor with the text at scale times the theme's size
// (0 or 1: as it is), clamped to the range of TextScales.
func ScaledTheme(name string, scale float64) fyne.Theme {
	if scale <= 0 {
		scale = 1
	}
	scale = min(max(scale, TextScales[0]), TextScales[len(TextScales)-1])
	var v *fyne.ThemeVariant
	switch name {
	case "light":
		l := theme.VariantLight
		v = &l
	case "dark":
		d := theme.VariantDark
		v = &d
	}
	return tallyTheme{Theme: theme.DefaultTheme(), variant: v, scale: float32(scale)}
}
