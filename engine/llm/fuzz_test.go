package llm

import (
	"bytes"
	"testing"
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
