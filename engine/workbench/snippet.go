package workbench

import (
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
)

// Search snippets: about 120 characters of what a message says, without
// the blocks the engine adds to it (the turn's <turn_meta> header, status
// and diagnostics blocks) — the one rule for the app's hit list and
// `tally search`.

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

// hitSnippet is the snippet of a hit's message around word (see Snippet):
// the text Search looks in (searchText), engine blocks left out.
func hitSnippet(m transcript.Message, word string) string {
	return Snippet(stripEngineBlocks(searchText(m)), word)
}

// Replacer names the rewrite that replaced a message, from the reason its
// rebuild record gives ("rewind to turn 3", "auto compaction"), for
// "replaced by …" in the app's search hits; a record without a reason was
// written by a compaction of an older Tally.
func Replacer(reason string) string {
	if strings.TrimSpace(reason) == "" {
		return "a compaction"
	}
	return reason
}
