package widget

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Banner is a dismissable one-line message at the top of the chat, used for
// errors that need the user to act (a failed connection, a bad folder).
type Banner struct {
	widget.BaseWidget

	bg     *ThemedRect
	label  *widget.Label
	action *widget.Button
}

// NewBanner returns a hidden banner.
func NewBanner() *Banner {
	b := &Banner{label: &widget.Label{Wrapping: fyne.TextWrapWord}}
	b.bg = NewThemedRect(theme.ColorNameError)
	b.bg.Rounded = true
	b.action = &widget.Button{Importance: widget.LowImportance}
	b.ExtendBaseWidget(b)
	b.Hide()
	return b
}

// ShowError shows msg in the error style.
func (b *Banner) ShowError(msg string) { b.show(msg, theme.ColorNameError, "", nil) }

// ShowInfo shows msg in a neutral style.
func (b *Banner) ShowInfo(msg string) { b.show(msg, theme.ColorNameInputBackground, "", nil) }

// ShowAction shows msg with a button that runs fn.
func (b *Banner) ShowAction(msg, action string, fn func()) {
	b.show(msg, theme.ColorNameError, action, fn)
}

func (b *Banner) show(msg string, bg fyne.ThemeColorName, action string, fn func()) {
	b.bg.Fill, b.bg.Tint = bg, nil
	if bg == theme.ColorNameError {
		b.bg.Tint = func(c color.Color) color.Color {
			r, g, bl, _ := c.RGBA()
			return fadeRGBA(r, g, bl)
		}
	}
	b.bg.Refresh()
	b.label.SetText(msg)
	if action != "" {
		b.action.SetText(action)
		b.action.OnTapped = fn
		b.action.Show()
	} else {
		b.action.Hide()
	}
	b.Show()
	b.Refresh()
}

// Text returns the message shown.
func (b *Banner) Text() string {
	if !b.Visible() {
		return ""
	}
	return b.label.Text
}

// CreateRenderer implements fyne.Widget.
func (b *Banner) CreateRenderer() fyne.WidgetRenderer {
	closeB := &widget.Button{Icon: theme.CancelIcon(), Importance: widget.LowImportance, OnTapped: func() { b.Hide() }}
	row := container.NewBorder(nil, nil, nil, container.NewHBox(b.action, closeB), b.label)
	return widget.NewSimpleRenderer(container.NewStack(b.bg, container.NewPadded(row)))
}
