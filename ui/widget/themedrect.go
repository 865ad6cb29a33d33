package widget

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// ThemedRect is a rectangle filled (and, when Stroke is set, outlined)
// in theme colours named rather than captured: it takes them from the
// theme in use each time it is refreshed, as Fyne refreshes every widget
// when the theme changes. A canvas.Rectangle filled with theme.Color at
// creation kept the colours of the theme it was made under.
type ThemedRect struct {
	widget.BaseWidget

	Fill, Stroke fyne.ThemeColorName // Stroke "" draws no outline
	StrokeWidth  float32
	Rounded      bool                          // corners of the theme's input radius
	Tint         func(color.Color) color.Color // changes the fill, if set
	min          fyne.Size
	rect         *canvas.Rectangle
}

// NewThemedRect returns a rectangle filled in the theme's colour fill.
func NewThemedRect(fill fyne.ThemeColorName) *ThemedRect {
	r := &ThemedRect{Fill: fill, rect: canvas.NewRectangle(nil)}
	r.ExtendBaseWidget(r)
	return r
}

// SetMinSize sets the smallest size the rectangle asks for.
func (r *ThemedRect) SetMinSize(s fyne.Size) { r.min = s }

// MinSize implements fyne.Widget.
func (r *ThemedRect) MinSize() fyne.Size { return r.min }

// CreateRenderer implements fyne.Widget.
func (r *ThemedRect) CreateRenderer() fyne.WidgetRenderer {
	r.paint()
	return &themedRectRenderer{r: r}
}

// paint takes the colours and the corners from the theme in use.
func (r *ThemedRect) paint() {
	fill := theme.Color(r.Fill)
	if r.Tint != nil {
		fill = r.Tint(fill)
	}
	r.rect.FillColor = fill
	r.rect.StrokeColor, r.rect.StrokeWidth = nil, 0
	if r.Stroke != "" {
		r.rect.StrokeColor, r.rect.StrokeWidth = theme.Color(r.Stroke), r.StrokeWidth
	}
	r.rect.CornerRadius = 0
	if r.Rounded {
		r.rect.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	}
}

type themedRectRenderer struct{ r *ThemedRect }

func (t *themedRectRenderer) Layout(s fyne.Size) { t.r.rect.Resize(s) }

func (t *themedRectRenderer) MinSize() fyne.Size { return t.r.min }

func (t *themedRectRenderer) Refresh() {
	t.r.paint()
	t.r.rect.Refresh()
}

func (t *themedRectRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{t.r.rect} }

func (t *themedRectRenderer) Destroy() {}
