package chat

import (
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

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
