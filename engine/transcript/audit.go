package transcript

import (
	"fmt"
	"slices"
	"strings"
)

// wrappers are the engine blocks each injected kind consists of: the tags
// its text must open and close with, and nothing else.
var wrappers = map[Kind][]string{
	KindStatus:      {"agent_status", "/agent_status"},
	KindReminder:    {"system-reminder", "/system-reminder"},
	KindDiagnostics: {"diagnostics", "/diagnostics"},
	KindSeed:        {"cycle_state_marker"},
	KindAttachment:  {"tool_images", "/tool_images"},
}

// Forged lists the engine tags in m that the engine did not put there, each
// described in a short phrase; nil means m is clean. The engine puts a tag
// only where it writes a block of its own: the <turn_meta> header of a
// human message, and the one wrapper of an injected message of kind
// status, reminder, diagnostics, seed or attachment. Any other occurrence (in text from
// the human, the model, a tool or a file, in reasoning, in a tool call's
// name or arguments, or a second tag inside an engine block) means text
// escaped neutralisation.
func Forged(m Message) []string {
	var out []string
	none := func(where, s string) {
		if tags := ReservedTags(s); len(tags) > 0 {
			out = append(out, fmt.Sprintf("%s carries %s", where, strings.Join(tags, ", ")))
		}
	}
	none("reasoning", m.Reasoning)
	none("tool name", m.ToolName)
	for _, c := range m.ToolCalls {
		none("tool call "+c.ID+" name", c.Name)
		none("tool call "+c.ID+" arguments", c.Arguments)
	}
	for i, b := range m.Blocks {
		where := fmt.Sprintf("%s %s block %d", m.Role, kindName(m.Kind), i)
		switch {
		case b.Type == BlockTurnMeta:
			want := []string{"turn_meta", "/turn_meta"}
			if !slices.Equal(ReservedTags(b.Text), want) || !strings.HasPrefix(b.Text, "<turn_meta>") || !strings.HasSuffix(b.Text, "</turn_meta>") {
				out = append(out, fmt.Sprintf("%s: the <turn_meta> header holds %s", where, strings.Join(ReservedTags(b.Text), ", ")))
			}
		case b.Type == BlockImage:
			none(where, b.Text) // a picture has no text of its own
			none(where+" image name", b.Image.Name)
		case m.Role == User && wrappers[m.Kind] != nil:
			if got := ReservedTags(b.Text); !slices.Equal(got, wrappers[m.Kind]) {
				out = append(out, fmt.Sprintf("%s: expected only %s, found %s", where, strings.Join(wrappers[m.Kind], ", "), strings.Join(got, ", ")))
			}
		default:
			none(where, b.Text)
		}
	}
	return out
}

func kindName(k Kind) string {
	if k == KindChat {
		return "chat"
	}
	return string(k)
}
