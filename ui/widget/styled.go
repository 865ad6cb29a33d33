package widget

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// StyledText returns a one-line, truncated text in a theme colour. Unlike
// a low-importance Label (drawn in the nearly invisible disabled colour),
// it stays readable on any background, selected rows included.
func StyledText(text string, c fyne.ThemeColorName, bold bool) *widget.RichText {
	t := &widget.RichText{Truncation: fyne.TextTruncateEllipsis, Scroll: container.ScrollNone}
	SetStyledText(t, text, c, bold)
	return t
}

// SetStyledText replaces the text and colour of t, drawn at the theme's
// text size, and refreshes it.
func SetStyledText(t *widget.RichText, text string, c fyne.ThemeColorName, bold bool) {
	SetStyledTextSized(t, text, c, bold, theme.SizeNameText)
}

// SetStyledTextSized is SetStyledText with a text size.
func SetStyledTextSized(t *widget.RichText, text string, c fyne.ThemeColorName, bold bool, size fyne.ThemeSizeName) {
	t.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		ColorName: c, TextStyle: fyne.TextStyle{Bold: bold}, SizeName: size, Inline: true}}}
	t.Refresh()
}

// colorOf is the current theme's colour named for k in names, or the
// fallback colour when names has none for k.
func colorOf[K comparable](names map[K]fyne.ThemeColorName, k K, fallback fyne.ThemeColorName) color.Color {
	if n, ok := names[k]; ok {
		return theme.Color(n)
	}
	return theme.Color(fallback)
}

// ShowIf shows o when on and hides it otherwise.
func ShowIf(o fyne.CanvasObject, on bool) {
	if on {
		o.Show()
	} else {
		o.Hide()
	}
}

// WidthWatcher is a layout that lays its children out full size and calls
// OnWidth when its width changes and OnHeight (if set) when its height
// does, so that a list at its bottom can stay there when a row above or
// below it appears.
type WidthWatcher struct {
	OnWidth  func(width float32)
	OnHeight func()

	last, lastH float32
}

// Layout implements fyne.Layout.
func (w *WidthWatcher) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Resize(size)
		o.Move(fyne.NewPos(0, 0))
	}
	if size.Width != w.last && size.Width > 0 {
		w.last = size.Width
		w.OnWidth(size.Width)
	}
	if size.Height != w.lastH && size.Height > 0 {
		w.lastH = size.Height
		if w.OnHeight != nil {
			w.OnHeight()
		}
	}
}

// MinSize implements fyne.Layout: a fixed 200×100, whatever the children
// ask, so the watched area can shrink.
func (w *WidthWatcher) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(200, 100)
}

var _ fyne.Layout = (*WidthWatcher)(nil)
