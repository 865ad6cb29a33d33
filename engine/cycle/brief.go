package cycle

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
	itext "github.com/tally-dev/tally/internal/text"
)

// BriefInstruction is the hand-off request appended as the last user
// message when a cycle ends: what the brief to the next cycle must carry
// and what it must leave out.
//
//go:embed brief.md
var BriefInstruction string

// Brief limits (DESIGN §4).
const (
	// BriefTokens is the largest hand-off brief.
	BriefTokens = 3_000
	// BriefTemperature is the sampling temperature of the brief call.
	BriefTemperature float32 = 0.3
)

// Tags around the brief in the model's answer and in the seed.
const (
	carryOpen  = "<carry_forward>"
	carryClose = "</carry_forward>"
)

// BriefRequest builds the hand-off call that ends a cycle. It replays the
// session's system prompt, tools and wire messages verbatim, so the
// provider's prefix cache serves the whole conversation, and appends
// [BriefInstruction] as a final user message. A trailing assistant message
// whose calls were never answered is left off, so a strict server accepts
// the request; system messages in msgs are dropped, since only index 0 may
// be one. msgs is not modified.
func BriefRequest(model, system string, tools []chat.Tool, msgs []chat.Message) llm.Request {
	out := make([]chat.Message, 0, len(msgs)+2)
	if system != "" {
		out = append(out, chat.Message{Role: chat.RoleSystem, Content: system})
	}
	for _, m := range msgs[:answered(msgs)] {
		if m.Role != chat.RoleSystem {
			out = append(out, m)
		}
	}
	out = append(out, chat.Message{Role: chat.RoleUser, Content: strings.TrimSpace(BriefInstruction)})
	t := BriefTemperature
	return llm.Request{Model: model, Messages: llm.JoinUserRuns(out), Tools: tools, MaxTokens: BriefTokens, Temperature: &t}
}

// answered returns the length of the longest prefix of msgs that does not
// end inside an unanswered tool-call group.
func answered(msgs []chat.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == chat.RoleTool {
			continue
		}
		if m.Role != chat.RoleAssistant || len(m.ToolCalls) == 0 {
			return len(msgs)
		}
		got := map[string]bool{}
		for _, r := range msgs[i+1:] {
			got[r.ToolCallID] = true
		}
		for _, c := range m.ToolCalls {
			if !got[c.ID] {
				return i
			}
		}
		return len(msgs)
	}
	return len(msgs)
}

// EnforceBrief extracts the brief from the model's answer and cuts it to
// at most [BriefTokens] tokens with a note at the cut. The brief is the
// longest text inside <carry_forward> tags when the answer has such a
// block of some substance; a weak model that only names the tags in
// passing ("put it in <carry_forward> and </carry_forward>") has its whole
// answer, tags removed, taken instead.
func EnforceBrief(text string) string {
	return CutBrief(extractBrief(text), BriefTokens)
}

// minCarried is the fewest characters a <carry_forward> block must hold to
// be taken as the brief when the answer around it says several times
// more.
const minCarried = 40

func extractBrief(text string) string {
	best, found := "", false
	for rest := text; ; {
		i := strings.Index(rest, carryOpen)
		if i < 0 {
			break
		}
		rest = rest[i+len(carryOpen):]
		block := rest
		if j := strings.Index(rest, carryClose); j >= 0 {
			block, rest = rest[:j], rest[j+len(carryClose):]
		}
		if b := strings.TrimSpace(block); len(b) > len(best) || !found {
			best, found = b, true
		}
	}
	whole := strings.TrimSpace(strings.NewReplacer(carryOpen, "", carryClose, "").Replace(text))
	if !found || (len(best) < minCarried && len(whole) > 4*len(best)+minCarried) {
		return whole
	}
	return best
}

// CutBrief returns brief trimmed and, when it has more than limit tokens,
// cut to the longest prefix that fits with a note saying where it was cut.
func CutBrief(brief string, limit int) string {
	text := strings.TrimSpace(brief)
	if tokens.Count(text) <= limit {
		return text
	}
	note := fmt.Sprintf("\n[brief cut at %s tokens]", itext.Thousands(limit))
	room := limit - tokens.Count(note)
	if room <= 0 {
		return strings.TrimSpace(note)
	}
	lo, hi := 0, len(text) // the prefix of length lo fits
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		for mid < len(text) && !utf8.RuneStart(text[mid]) {
			mid++
		}
		if mid > hi {
			break
		}
		if tokens.Count(text[:mid]) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.TrimRight(text[:lo], " \n") + note
}
