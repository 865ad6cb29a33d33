package llm

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
)

// FuzzAssembleStream feeds a streamed reply, one JSON event a line, to the
// assembler: it never panics, and what it keeps stays within the reply
// and tool-call caps.
func FuzzAssembleStream(f *testing.F) {
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n" +
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}` + "\n" +
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":9999999,"function":{"name":""}}]}}]}`))
	f.Add([]byte("{\n}\nnull\n[]"))
	lim := replyLimits{reply: 4096, call: 1024}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := newAssembler(lim)
		for _, line := range bytes.Split(data, []byte("\n")) {
			if err := a.add(line, Callbacks{}, ""); err != nil {
				break
			}
		}
		r := a.response()
		if r == nil {
			t.Fatal("no response")
		}
		size := len(r.Content)
		for _, c := range r.ToolCalls {
			if len(c.Arguments) > lim.call {
				t.Fatalf("a call of %d bytes kept past the cap of %d", len(c.Arguments), lim.call)
			}
			size += len(c.Arguments)
		}
		if size > 2*lim.reply {
			t.Fatalf("kept %d bytes past the reply cap of %d", size, lim.reply)
		}
	})
}

// FuzzMessageEncodingMatchesGoOpenAI holds engine/chat's encoding of a
// message against go-openai's for the same message: any role, text,
// reasoning, tool call and image URL, as plain or multi-part content, give
// the same bytes, so a body is what go-openai would send.
func FuzzMessageEncodingMatchesGoOpenAI(f *testing.F) {
	f.Add("user", "hi <b>&</b>", "", "", "", "", "", false)
	f.Add("assistant", "", "think \u2028", "call_1", "read_file", `{"path":"a"}`, "", false)
	f.Add("user", "look", "", "", "", "", "data:image/png;base64,AA==", true)
	f.Add("tool", "\xff\x00", "", "call_1", "", "", "", false)
	f.Fuzz(func(t *testing.T, role, text, reasoning, id, name, args, image string, parts bool) {
		m := chat.Message{Role: role, Reasoning: reasoning}
		if parts {
			m.Parts = []chat.Part{{Type: chat.PartText, Text: text}, {Type: chat.PartImage, ImageURL: image}}
		} else {
			m.Content = text
		}
		if role == chat.RoleTool {
			m.ToolCallID = id
		} else if id != "" || name != "" || args != "" {
			m.ToolCalls = []chat.ToolCall{{ID: id, Name: name, Arguments: args}}
		}
		want, err := json.Marshal(goOpenAIMessages([]chat.Message{m})[0])
		if err != nil {
			t.Fatalf("go-openai could not encode %+v: %v", m, err)
		}
		if got := chat.Encode(m); !bytes.Equal(got, want) {
			t.Fatalf("chat encodes %+v as\n%s\ngo-openai as\n%s", m, got, want)
		}
	})
}
