package ui

import (
	"strings"

	"fyne.io/fyne/v2/widget"
)

// Markdown for the chat. Fyne's rich text wraps each inline segment on its
// own: a segment that starts near the end of a line is broken one
// character per line, and spaces at segment boundaries can vanish
// ("Addand Mul"). Answers are mostly prose with inline code, so each run of
// inline text is merged into one segment before it is shown: inline code
// keeps its backticks (so identifiers still stand out) and emphasis is
// shown as plain text, while block elements — headings, lists, code
// blocks, quotes, links — keep their own segments.

func parseMarkdown(s string) []widget.RichTextSegment {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return flattenInline(widget.NewRichTextFromMarkdown(s).Segments)
}

// flattenInline merges each run of inline text segments, with the block
// segment that ends it, into one segment; it descends into lists and
// paragraphs.
func flattenInline(segs []widget.RichTextSegment) []widget.RichTextSegment {
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
