package widget

import (
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// The texts of a message for people: one line of it, as the previews, the
// archive and the chat's notices list it, or the whole of it.

// EngineLabels name what the engine adds to the conversation, for people:
// the one place the chat, the archive and the previews take them from.
var EngineLabels = map[transcript.Kind]string{
	transcript.KindSeed:        "new cycle seeded (the model starts from this)",
	transcript.KindReminder:    "reminder the engine added for the model",
	transcript.KindStatus:      "status the engine sent to the model",
	transcript.KindDiagnostics: "diagnostics after a file write",
	transcript.KindAck:         "acknowledgement the engine added",
	transcript.KindRepair:      "result the engine added for an interrupted call",
	transcript.KindAttachment:  "images a tool returned, shown to the model",
}

// EngineLine is an engine-added message as "label: first line", with the
// engine's tags (<system-reminder>…) taken off, cut to n runes.
func EngineLine(m *transcript.Message, n int) string {
	label := EngineLabels[m.Kind]
	if label == "" {
		label = string(m.Kind)
	}
	return label + ": " + text.FirstLine(stripEngineTags(m.Body()), n)
}

// isTagStart reports whether c can start a tag name.
func isTagStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// stripEngineTags removes the opening and closing tags the engine wraps
// its messages in, such as <system-reminder> and <agent_status>.
func stripEngineTags(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, "<") {
		end := strings.Index(s, ">")
		if end < 2 || strings.Contains(s[1:end], "\n") || !isTagStart(s[1]) {
			break
		}
		s = strings.TrimSpace(s[end+1:])
	}
	for strings.HasSuffix(s, ">") {
		start := strings.LastIndex(s, "</")
		if start < 0 || strings.ContainsAny(s[start:], " \n") {
			break
		}
		s = strings.TrimSpace(s[:start])
	}
	return s
}

// MessageLine names a message in a line: its role and first words, as
// the previews and the archive list it.
func MessageLine(m transcript.Message) string {
	switch {
	case m.Role == transcript.Tool:
		return "result of " + orName(m.ToolName) + ": " + text.FirstLine(m.Text(), 70)
	case m.Role == transcript.Assistant && len(m.ToolCalls) > 0:
		names := make([]string, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			names[i] = c.Name
		}
		s := "assistant calls " + strings.Join(names, ", ")
		if t := text.FirstLine(m.Text(), 50); t != "" {
			s += ": " + t
		}
		return s
	case m.Kind != transcript.KindChat:
		return EngineLine(&m, 70)
	case m.Role == transcript.User:
		return "you: " + text.FirstLine(m.Body(), 70)
	}
	return string(m.Role) + ": " + text.FirstLine(m.Text(), 70)
}

func orName(s string) string {
	if s == "" {
		return "a tool"
	}
	return s
}

// FullText is a message as a person reads it whole: its text, its
// reasoning, then one line per tool call with the call's arguments.
func FullText(m transcript.Message) string {
	var sb strings.Builder
	if m.Kind != transcript.KindChat {
		sb.WriteString("(" + EngineLabels[m.Kind] + ")\n\n")
	}
	sb.WriteString(m.Text())
	if m.Reasoning != "" {
		sb.WriteString("\n\nReasoning:\n" + m.Reasoning)
	}
	for _, c := range m.ToolCalls {
		sb.WriteString("\n\n" + c.Name + " " + c.Arguments)
	}
	return strings.TrimSpace(sb.String())
}
