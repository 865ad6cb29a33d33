package transcript

import "strings"

// reservedTags are the markers only the engine may write. Text from the
// human, the model, files or tool output that contains one (in any letter
// case, opening or closing) has its bracket replaced, so it reads the same
// to a person but can never open or close one.
var reservedTags = []string{
	"agent_status", "system-reminder", "turn_meta", "diagnostics",
	"tool_result_ref", "cycle_state",
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
