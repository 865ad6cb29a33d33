package widget

import (
	"strings"

	"fyne.io/fyne/v2/widget"
)

// Markdown for the chat. Fyne's rich text wraps each inline segment on its
// own: a segment that starts near the end of a line is broken one
// character per line, and spaces at segment boundaries can vanish
// ("Addand Mul"). Answers are mostly prose with inline code, so each run of
// inline text that holds inline code is merged into one segment before it
// is shown: the code keeps its backticks (so identifiers still stand out)
// and emphasis in that run is shown as plain text, while block elements —
// headings, lists, code blocks, quotes, links — keep their own segments.

// ParseMarkdown turns an answer's Markdown into rich-text segments that
// wrap by words (see above); blank text gives none.
func ParseMarkdown(s string) []widget.RichTextSegment {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return flattenInline(widget.NewRichTextFromMarkdown(s).Segments)
}

// flattenInline merges each run of inline text segments that holds inline
// code, with the block segment that ends it, into one segment; runs
// without code keep their emphasis. It descends into lists and paragraphs.
func flattenInline(segs []widget.RichTextSegment) []widget.RichTextSegment {
	if !hasInlineCode(segs) {
		return descend(segs)
	}
	out := make([]widget.RichTextSegment, 0, len(segs))
	var run strings.Builder
	pending := false
	flush := func() {
		if pending {
			out = append(out, &widget.TextSegment{Style: widget.RichTextStyleInline, Text: run.String()})
			run.Reset()
			pending = false
		}
	}
	for _, sg := range segs {
		switch v := sg.(type) {
		case *widget.TextSegment:
			if v.Style.Inline {
				if v.Style.TextStyle.Monospace {
					unpad(&run)
				}
				run.WriteString(inlineText(v))
				pending = true
				continue
			}
			if pending && mergeable(v.Style) {
				run.WriteString(v.Text)
				out = append(out, &widget.TextSegment{Style: v.Style, Text: run.String()})
				run.Reset()
				pending = false
				continue
			}
			flush()
			out = append(out, v)
		case *widget.ListSegment:
			flush()
			v.Items = flattenInline(v.Items)
			out = append(out, v)
		case *widget.ParagraphSegment:
			flush()
			v.Texts = flattenInline(v.Texts)
			out = append(out, v)
		default:
			flush()
			out = append(out, sg)
		}
	}
	flush()
	return out
}

// hasInlineCode reports whether segs hold an inline code segment at their
// own level.
func hasInlineCode(segs []widget.RichTextSegment) bool {
	for _, sg := range segs {
		if t, ok := sg.(*widget.TextSegment); ok && t.Style.Inline && t.Style.TextStyle.Monospace {
			return true
		}
	}
	return false
}

// descend flattens inside the lists and paragraphs of segs only.
func descend(segs []widget.RichTextSegment) []widget.RichTextSegment {
	for _, sg := range segs {
		switch v := sg.(type) {
		case *widget.ListSegment:
			v.Items = flattenInline(v.Items)
		case *widget.ParagraphSegment:
			v.Texts = flattenInline(v.Texts)
		}
	}
	return segs
}

// inlineText is an inline segment's text as merged: code keeps its
// backticks.
func inlineText(t *widget.TextSegment) string {
	if t.Style.TextStyle.Monospace {
		return "`" + t.Text + "`"
	}
	return t.Text
}

// mergeable reports whether a block text style can end a merged run: plain
// paragraphs can; headings and code blocks keep their own look.
func mergeable(st widget.RichTextStyle) bool {
	return !st.TextStyle.Monospace && st.SizeName == widget.RichTextStyleParagraph.SizeName && !st.TextStyle.Bold
}

// unpad drops the space Fyne's Markdown parser puts between an opening
// bracket and inline code: "(`x`)" arrives as "( " then "x".
func unpad(run *strings.Builder) {
	t := run.String()
	for _, open := range []string{"( ", "[ ", "{ "} {
		if strings.HasSuffix(t, open) {
			run.Reset()
			run.WriteString(strings.TrimSuffix(t, " "))
			return
		}
	}
}
