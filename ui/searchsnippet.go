package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
)

// Search snippets as shown: without the blocks the engine adds to a
// message (the turn's <turn_meta> header, status and diagnostics blocks),
// and with the words searched for in bold.

// engineTags are the blocks the engine writes into messages, which a
// snippet leaves out.
var engineTags = []string{"turn_meta", "agent_status", "system-reminder", "diagnostics", "tool_result_ref", "cycle_state", "carry_forward"}

// stripEngineBlocks removes every engine block from s, and what is left of
// one cut at either end: text before a stray closing tag, and text after a
// stray opening tag.
func stripEngineBlocks(s string) string {
	for _, tag := range engineTags {
		s = stripTag(s, "<"+tag, "</"+tag+">")
	}
	return strings.Join(strings.Fields(s), " ")
}

// stripTag removes the blocks from open to end (matched in any letter
// case) from s, see stripEngineBlocks.
func stripTag(s, open, end string) string {
	for {
		low := strings.ToLower(s)
		if len(low) != len(s) {
			return s // case folding changed the length: leave it
		}
		i, j := strings.Index(low, open), strings.Index(low, end)
		switch {
		case j >= 0 && (i < 0 || j < i): // the text starts inside a block
			s = s[j+len(end):]
		case i >= 0 && j > i:
			s = s[:i] + " " + s[j+len(end):]
		case i >= 0: // the text ends inside a block
			s = s[:i]
		default:
			return s
		}
	}
}

// hitText is what a hit's message says, engine blocks left out.
func hitText(m transcript.Message) string {
	var b strings.Builder
	b.WriteString(m.Text())
	for _, c := range m.ToolCalls {
		b.WriteString("\n" + c.Name + " " + c.Arguments)
	}
	if m.ToolName != "" {
		b.WriteString("\n" + m.ToolName)
	}
	return stripEngineBlocks(b.String())
}

// hitSnippet is about 120 characters of the hit's text around the first
// word searched for, on one line, without engine blocks.
func hitSnippet(h workbench.SearchHit, words []string) string {
	if h.Cycle == 0 {
		return h.Snippet // the title
	}
	t := hitText(h.Message)
	if t == "" {
		return stripEngineBlocks(h.Snippet)
	}
	word := ""
	if len(words) > 0 {
		word = words[0]
	}
	return workbench.Snippet(t, word)
}

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
	rt.Segments = markWords(hitSnippet(h, words), words)
	rt.Refresh()
}
