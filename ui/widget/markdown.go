package widget

import (
	"strings"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Markdown for the chat. Fyne's rich text has no tables, draws code blocks
// without a background and wraps each inline segment on its own (a
// segment that starts near the end of a line breaks one character per
// line), which forced inline code and emphasis into one plain run. So an
// answer is parsed here, with GitHub's extensions, into a small tree of
// blocks of styled spans, and drawn by the Markdown widget: paragraphs
// wrap word by word across spans of any style, inline code and code
// blocks get a background, tables are aligned columns.

// Span is a run of inline text in one style.
type Span struct {
	Text                       string
	Bold, Italic, Code, Strike bool
	Link                       bool
	Break                      bool // a hard line break before the text
}

// BlockKind is what a Block is.
type BlockKind int

// The kinds of block.
const (
	BlockPara BlockKind = iota
	BlockHeading
	BlockCode
	BlockList
	BlockQuote
	BlockTable
	BlockRule
)

// Align is a table column's alignment.
type Align int

// Column alignments.
const (
	AlignLeft Align = iota
	AlignCenter
	AlignRight
)

// Block is one block of an answer.
type Block struct {
	Kind  BlockKind
	Level int    // a heading's level (1–6)
	Spans []Span // a paragraph's or heading's text
	Code  string // a code block's text
	// Items are a list's items, each its own blocks; Ordered lists are
	// numbered from Start. Checks holds a task item's box: 0 none, 1
	// open, 2 ticked.
	Items   [][]*Block
	Ordered bool
	Start   int
	Checks  []int
	// Children are a quote's blocks.
	Children []*Block
	// Rows are a table's rows of cells (the first is the header), Aligns
	// its columns' alignments.
	Rows   [][][]Span
	Aligns []Align
}

// Doc is a parsed answer.
type Doc struct {
	Blocks []*Block
	plain  string
}

// ParseDoc parses Markdown with GitHub's extensions (tables,
// strikethrough, task lists); blank text gives nil.
func ParseDoc(src string) *Doc {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	b := []byte(src)
	root := gfm.Parser().Parse(text.NewReader(b))
	p := parser{src: b}
	d := &Doc{Blocks: p.blocks(root)}
	d.plain = d.text()
	return d
}

// PlainText is the document's text without its markup, for search and
// tests.
func (d *Doc) PlainText() string {
	if d == nil {
		return ""
	}
	return d.plain
}

// gfm parses Markdown with GitHub's extensions.
var gfm = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))

type parser struct{ src []byte }

// blocks converts the block children of n.
func (p parser) blocks(n gast.Node) []*Block {
	var out []*Block
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if b := p.block(c); b != nil {
			out = append(out, b)
		}
	}
	return out
}

func (p parser) block(n gast.Node) *Block {
	switch v := n.(type) {
	case *gast.Paragraph, *gast.TextBlock:
		return &Block{Kind: BlockPara, Spans: p.inlines(v, Span{})}
	case *gast.Heading:
		return &Block{Kind: BlockHeading, Level: v.Level, Spans: p.inlines(v, Span{Bold: true})}
	case *gast.FencedCodeBlock, *gast.CodeBlock:
		var b strings.Builder
		lines := v.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(p.src))
		}
		return &Block{Kind: BlockCode, Code: strings.TrimRight(b.String(), "\n")}
	case *gast.List:
		l := &Block{Kind: BlockList, Ordered: v.IsOrdered(), Start: v.Start}
		for it := v.FirstChild(); it != nil; it = it.NextSibling() {
			items := p.blocks(it)
			check := 0
			if len(items) > 0 && len(items[0].Spans) > 0 {
				if cb := taskBox(it); cb != 0 {
					check = cb
				}
			}
			l.Items = append(l.Items, items)
			l.Checks = append(l.Checks, check)
		}
		return l
	case *gast.Blockquote:
		return &Block{Kind: BlockQuote, Children: p.blocks(v)}
	case *gast.ThematicBreak:
		return &Block{Kind: BlockRule}
	case *east.Table:
		t := &Block{Kind: BlockTable}
		for _, a := range v.Alignments {
			switch a {
			case east.AlignCenter:
				t.Aligns = append(t.Aligns, AlignCenter)
			case east.AlignRight:
				t.Aligns = append(t.Aligns, AlignRight)
			default:
				t.Aligns = append(t.Aligns, AlignLeft)
			}
		}
		for r := v.FirstChild(); r != nil; r = r.NextSibling() {
			var row [][]Span
			bold := r.Kind() == east.KindTableHeader
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				row = append(row, p.inlines(c, Span{Bold: bold}))
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	case *gast.HTMLBlock:
		var b strings.Builder
		lines := v.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(p.src))
		}
		return &Block{Kind: BlockPara, Spans: []Span{{Text: strings.TrimSpace(b.String())}}}
	}
	return nil
}

// taskBox says whether a list item starts with a task box.
func taskBox(item gast.Node) int {
	found := 0
	_ = gast.Walk(item, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if cb, ok := n.(*east.TaskCheckBox); ok && entering {
			found = 1
			if cb.IsChecked {
				found = 2
			}
			return gast.WalkStop, nil
		}
		return gast.WalkContinue, nil
	})
	return found
}

// inlines converts the inline children of n in style st.
func (p parser) inlines(n gast.Node, st Span) []Span {
	var out []Span
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, p.inline(c, st)...)
	}
	return out
}

func (p parser) inline(n gast.Node, st Span) []Span {
	switch v := n.(type) {
	case *gast.Text:
		s := st
		s.Text = string(v.Segment.Value(p.src))
		out := []Span{s}
		switch {
		case v.HardLineBreak():
			out = append(out, Span{Break: true})
		case v.SoftLineBreak():
			out = append(out, Span{Text: " "})
		}
		return out
	case *gast.String:
		s := st
		s.Text = string(v.Value)
		return []Span{s}
	case *gast.CodeSpan:
		s := st
		s.Code = true
		var b strings.Builder
		for c := v.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*gast.Text); ok {
				b.Write(t.Segment.Value(p.src))
			}
		}
		s.Text = b.String()
		return []Span{s}
	case *gast.Emphasis:
		s := st
		if v.Level >= 2 {
			s.Bold = true
		} else {
			s.Italic = true
		}
		return p.inlines(v, s)
	case *east.Strikethrough:
		s := st
		s.Strike = true
		return p.inlines(v, s)
	case *gast.Link:
		s := st
		s.Link = true
		return p.inlines(v, s)
	case *gast.AutoLink:
		s := st
		s.Link = true
		s.Text = string(v.URL(p.src))
		return []Span{s}
	case *gast.Image:
		s := st
		s.Italic = true
		return append([]Span{{Text: "[image: ", Italic: true}}, append(p.inlines(v, s), Span{Text: "]", Italic: true})...)
	case *east.TaskCheckBox:
		if v.IsChecked {
			return []Span{{Text: "☑ "}}
		}
		return []Span{{Text: "☐ "}}
	case *gast.RawHTML:
		var b strings.Builder
		for i := 0; i < v.Segments.Len(); i++ {
			seg := v.Segments.At(i)
			b.Write(seg.Value(p.src))
		}
		s := st
		s.Text = b.String()
		return []Span{s}
	}
	return p.inlines(n, st)
}

// text is the document as plain text: blocks on lines of their own,
// table cells separated by tabs.
func (d *Doc) text() string {
	var b strings.Builder
	writeBlocks(&b, d.Blocks)
	return strings.TrimSpace(b.String())
}

func writeBlocks(b *strings.Builder, blocks []*Block) {
	for _, bl := range blocks {
		switch bl.Kind {
		case BlockPara, BlockHeading:
			b.WriteString(spansText(bl.Spans))
		case BlockCode:
			b.WriteString(bl.Code)
		case BlockList:
			for _, it := range bl.Items {
				b.WriteString("• ")
				writeBlocks(b, it)
			}
		case BlockQuote:
			writeBlocks(b, bl.Children)
		case BlockTable:
			for _, row := range bl.Rows {
				cells := make([]string, len(row))
				for i, c := range row {
					cells[i] = spansText(c)
				}
				b.WriteString(strings.Join(cells, "\t") + "\n")
			}
		case BlockRule:
			b.WriteString("—")
		}
		b.WriteString("\n")
	}
}

// spansText is the text of spans.
func spansText(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		if s.Break {
			b.WriteString("\n")
		}
		b.WriteString(s.Text)
	}
	return b.String()
}
