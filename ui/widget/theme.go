package widget

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// tallyTheme is the default theme, optionally forced to one variant
// (light or dark), with a focus colour that shows on every widget. The
// default focus colour is the primary colour made translucent, so the
// focused primary button (Send, Create, Approve) looked exactly like the
// unfocused one and keyboard users could not see where they were.
type tallyTheme struct {
	fyne.Theme
	variant *fyne.ThemeVariant // nil: follow the system
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
	return t.Theme.Color(n, v)
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
func ThemeFor(name string) fyne.Theme {
	var v *fyne.ThemeVariant
	switch name {
	case "light":
		l := theme.VariantLight
		v = &l
	case "dark":
		d := theme.VariantDark
		v = &d
	}
	return tallyTheme{Theme: theme.DefaultTheme(), variant: v}
}
