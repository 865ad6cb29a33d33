package transcript

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// reservedTags are the markers only the engine may write. Text from the
// human, the model, files or tool output that contains one (in any letter
// case, opening or closing) has its bracket replaced, so it reads the same
// to a person but can never open or close one.
var reservedTags = []string{
	"agent_status", "system-reminder", "turn_meta", "diagnostics",
	"tool_result_ref", "cycle_state", "tool_images",
}

// Neutralize defuses engine tags in untrusted text: "<agent_status" becomes
// "‹agent_status" and "</agent_status" becomes "‹/agent_status"; the seed
// marker "[CYCLE STATE]" becomes "[CYCLE-STATE]". Everything else is
// returned byte for byte.
func Neutralize(s string) string {
	if !strings.ContainsAny(s, "<[") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			j := i + 1
			if j < len(s) && s[j] == '/' {
				j++
			}
			if reservedAt(s[j:]) {
				b.WriteString(s[last:i])
				b.WriteString("‹")
				last = i + 1
			}
		case '[':
			if len(s)-i >= 13 && strings.EqualFold(s[i:i+13], "[CYCLE STATE]") {
				b.WriteString(s[last:i])
				b.WriteString("[CYCLE-STATE]")
				last = i + 13
				i += 12
			}
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func reservedAt(s string) bool {
	for _, t := range reservedTags {
		if len(s) >= len(t) && strings.EqualFold(s[:len(t)], t) {
			return true
		}
	}
	return false
}

// NeutralizeLine is [Neutralize] for text that must stay on one line inside
// an engine block (a path, a file name, a branch, a model name): on top of
// defusing engine tags, line breaks and other control or invisible format
// characters are written as visible escapes such as "\n" and "\u202e", so a
// file name cannot start a new line of a block, let alone a new block.
func NeutralizeLine(s string) string {
	s = Neutralize(s)
	clean := true
	for _, r := range s {
		if unsafeInLine(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unsafeInLine(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeInLine(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
}

// ReservedTags reports every engine tag (opening or closing, any letter
// case) and "[CYCLE STATE]" marker in s, in order, as the lower-case tag
// name with a leading "/" for a closing tag. It is the audit's view of the
// same rule Neutralize applies.
func ReservedTags(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			j, closing := i+1, false
			if j < len(s) && s[j] == '/' {
				j, closing = j+1, true
			}
			for _, t := range reservedTags {
				if len(s)-j >= len(t) && strings.EqualFold(s[j:j+len(t)], t) {
					if closing {
						t = "/" + t
					}
					out = append(out, t)
					break
				}
			}
		case '[':
			if len(s)-i >= 13 && strings.EqualFold(s[i:i+13], "[CYCLE STATE]") {
				out = append(out, "cycle_state_marker")
			}
		}
	}
	return out
}
