package widget

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Markdown draws a parsed answer (see ParseDoc): one object per block,
// stacked, each as wide as the widget.
type Markdown struct {
	widget.BaseWidget

	doc  *Doc
	box  *fyne.Container // the blocks
	pad  *fyne.Container // box with a label's inner padding around it
	pool blockPool       // the widgets the last document was drawn with
	look look            // the theme the blocks were drawn for
}

// look is what of the theme a document's blocks keep once drawn: the
// text size and the colours of text, code and rules.
type look struct {
	size         float32
	fg, code, ln [4]uint32
}

// currentLook is the look of the theme in use.
func currentLook() look {
	return look{size: theme.TextSize(), fg: rgba(theme.Color(theme.ColorNameForeground)),
		code: rgba(codeBackground()), ln: rgba(theme.Color(theme.ColorNameSeparator))}
}

func rgba(c color.Color) [4]uint32 {
	r, g, b, a := c.RGBA()
	return [4]uint32{r, g, b, a}
}

// blockPool keeps the widgets a Markdown widget drew its document with,
// so that the next one it shows reuses them: Fyne keeps a renderer for
// every widget it has drawn, and a chat row shows one answer after
// another as it is recycled.
type blockPool struct {
	flows  []*flowText
	codes  []*widget.Label
	nf, nc int
}

// reset makes every pooled widget free again.
func (p *blockPool) reset() { p.nf, p.nc = 0, 0 }

// flow returns a paragraph of spans, a pooled one when there is one.
func (p *blockPool) flow(spans []Span, size float32, align Align) *flowText {
	if p.nf < len(p.flows) {
		f := p.flows[p.nf]
		p.nf++
		f.setSpans(spans, size, align)
		f.Refresh()
		return f
	}
	f := newFlow(spans, size, align)
	p.flows = append(p.flows, f)
	p.nf++
	return f
}

// code returns the label of a code block, a pooled one when there is one.
func (p *blockPool) code(text string) *widget.Label {
	if p.nc < len(p.codes) {
		l := p.codes[p.nc]
		p.nc++
		l.SetText(text)
		return l
	}
	l := &widget.Label{Text: text, TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak, Selectable: true}
	p.codes = append(p.codes, l)
	p.nc++
	return l
}

// NewMarkdown returns a widget showing doc (nil: nothing).
func NewMarkdown(doc *Doc) *Markdown {
	m := &Markdown{box: container.New(layout.NewCustomPaddedVBoxLayout(theme.Padding() * 2))}
	p := theme.InnerPadding()
	m.pad = container.New(layout.NewCustomPaddedLayout(p/2, p/2, p, p), m.box)
	m.ExtendBaseWidget(m)
	m.SetDoc(doc)
	return m
}

// SetDoc shows doc; setting the one shown again changes nothing, unless
// the theme changed since it was drawn.
func (m *Markdown) SetDoc(doc *Doc) {
	if doc == m.doc && (doc == nil || len(m.box.Objects) > 0) && m.look == currentLook() {
		return
	}
	m.doc = doc
	m.draw()
	m.box.Refresh()
	m.Refresh()
}

// draw makes the blocks of the document for the theme in use.
func (m *Markdown) draw() {
	m.look = currentLook()
	m.box.Objects = nil
	m.pool.reset()
	if m.doc != nil {
		m.box.Objects = m.pool.blockObjects(m.doc.Blocks)
	}
}

// Doc returns the document shown.
func (m *Markdown) Doc() *Doc { return m.doc }

// PlainText is the shown document's text without markup.
func (m *Markdown) PlainText() string { return m.doc.PlainText() }

// CreateRenderer implements fyne.Widget.
func (m *Markdown) CreateRenderer() fyne.WidgetRenderer {
	return markdownRenderer{WidgetRenderer: widget.NewSimpleRenderer(m.pad), m: m}
}

// markdownRenderer draws the blocks again when the theme changed (Fyne
// refreshes every widget then): their sizes, list markers, rules and code
// backgrounds were taken from the theme they were drawn for.
type markdownRenderer struct {
	fyne.WidgetRenderer
	m *Markdown
}

// Refresh implements fyne.WidgetRenderer.
func (r markdownRenderer) Refresh() {
	if r.m.doc != nil && r.m.look != currentLook() {
		r.m.draw()
	}
	r.WidgetRenderer.Refresh()
}

// blockObjects draws blocks.
func (p *blockPool) blockObjects(blocks []*Block) []fyne.CanvasObject {
	out := make([]fyne.CanvasObject, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, p.blockObject(b))
	}
	return out
}

func (p *blockPool) blockObject(b *Block) fyne.CanvasObject {
	size := theme.TextSize()
	switch b.Kind {
	case BlockHeading:
		switch b.Level {
		case 1:
			size = theme.Size(theme.SizeNameHeadingText)
		case 2:
			size = theme.Size(theme.SizeNameSubHeadingText)
		default:
			size = theme.TextSize() * 1.1
		}
		return p.flow(b.Spans, size, AlignLeft)
	case BlockCode:
		return p.codeBlock(b.Code)
	case BlockList:
		return p.listObject(b)
	case BlockQuote:
		bar := canvas.NewRectangle(theme.Color(theme.ColorNameSeparator))
		bar.SetMinSize(fyne.NewSize(3, 0))
		return container.NewBorder(nil, nil, container.NewHBox(bar, layout.NewSpacer()), nil,
			container.NewVBox(p.blockObjects(b.Children)...))
	case BlockTable:
		return newTable(b)
	case BlockRule:
		return widget.NewSeparator()
	}
	return p.flow(b.Spans, size, AlignLeft)
}

// codeBlock is a code block: monospace, wrapped at any character, on the
// code background; it can be selected and copied.
func (p *blockPool) codeBlock(code string) fyne.CanvasObject {
	bg := canvas.NewRectangle(codeBackground())
	bg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	return container.NewStack(bg, container.NewPadded(p.code(code)))
}

// listObject is a list: each item's marker beside its blocks.
func (p *blockPool) listObject(b *Block) fyne.CanvasObject {
	box := container.NewVBox()
	for i, item := range b.Items {
		marker := "•"
		if b.Ordered {
			marker = fmt.Sprintf("%d.", b.Start+i)
		}
		if i < len(b.Checks) && b.Checks[i] != 0 {
			marker = ""
		}
		m := canvas.NewText(marker, theme.Color(theme.ColorNameForeground))
		m.TextSize = theme.TextSize()
		w := fyne.MeasureText("00.", theme.TextSize(), fyne.TextStyle{}).Width
		pad := canvas.NewRectangle(color.Transparent)
		pad.SetMinSize(fyne.NewSize(w+theme.Padding(), 0))
		left := container.NewVBox(container.NewStack(pad, m))
		box.Add(container.NewBorder(nil, nil, left, nil, container.NewVBox(p.blockObjects(item)...)))
	}
	return box
}
