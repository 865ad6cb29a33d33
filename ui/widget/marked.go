package widget

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// MarkWords splits s into rich-text segments with the occurrences of words
// (lower-case; found in any letter case) in bold, as search snippets show
// them. A text whose lower-case form changes its length is shown plain.
func MarkWords(s string, words []string) []widget.RichTextSegment {
	low := strings.ToLower(s)
	var segs []widget.RichTextSegment
	plain := func(t string, bold bool) {
		if t == "" {
			return
		}
		segs = append(segs, &widget.TextSegment{Text: t, Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Bold: bold}}})
	}
	last := 0
	if len(low) == len(s) {
		for i := 0; i < len(s); {
			n := 0
			for _, w := range words {
				if w != "" && strings.HasPrefix(low[i:], w) {
					n = max(n, len(w))
				}
			}
			if n == 0 {
				i++
				continue
			}
			plain(s[last:i], false)
			plain(s[i:i+n], true)
			i += n
			last = i
		}
	}
	plain(s[last:], false)
	return segs
}
