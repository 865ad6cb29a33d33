package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/workbench"
)

// Search snippets as shown: as the workbench cut them (without the
// engine's blocks), with the words searched for in bold.

// markWords splits s into segments, the occurrences of words (in any
// letter case) in bold.
func markWords(s string, words []string) []widget.RichTextSegment {
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

// setHitSnippet shows a hit's snippet in rt with the words in bold.
func setHitSnippet(rt *widget.RichText, h workbench.SearchHit, words []string) {
	rt.Segments = markWords(h.Snippet, words) // cut by the workbench, engine blocks left out
	rt.Refresh()
}
