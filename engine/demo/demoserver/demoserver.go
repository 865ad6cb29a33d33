// Package demoserver serves the demo's script (demo.Answer) over loopback
// HTTP behind llmtest's OpenAI-compatible test server, for the smoke test
// (scripts/llmtestd) and for tests that want the engine's real client and
// a strict backend. The app does not link it: it runs the demo in process
// with demo.Model.
package demoserver

import (
	"time"

	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Script is demo.Answer as an llmtest.Script that pauses pace before each
// answer.
func Script(pace time.Duration) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		q := demo.Request{Tools: req.Tools}
		for _, m := range req.Messages {
			msg := demo.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, demo.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			}
			q.Messages = append(q.Messages, msg)
		}
		a := demo.Answer(q)
		r := llmtest.Reply{Content: a.Content, Reasoning: a.Reasoning, Delay: pace}
		for _, c := range a.ToolCalls {
			r.ToolCalls = append(r.ToolCalls, llmtest.ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
		return r
	})
}
