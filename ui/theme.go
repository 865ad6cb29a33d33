package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// variantTheme is the default theme forced to one variant (light or dark).
type variantTheme struct {
	fyne.Theme
	variant fyne.ThemeVariant
}

// Color implements fyne.Theme with the forced variant.
func (t variantTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.variant)
}

// themeFor returns the theme for a Settings.Theme value: "light", "dark",
// or anything else to follow the system.
func themeFor(name string) fyne.Theme {
	switch name {
	case "light":
		return variantTheme{theme.DefaultTheme(), theme.VariantLight}
	case "dark":
		return variantTheme{theme.DefaultTheme(), theme.VariantDark}
	}
	return theme.DefaultTheme()
}
