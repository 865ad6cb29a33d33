package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// A sub-agent repeated an identical call until its step budget ran out:
// the child's loop never asked the loop guard. Now the third identical
// call is blocked, exactly as in the parent's turn.
func TestSubAgentRepeatsIdenticalCallUntilBudget(t *testing.T) {
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			if toolResults(r.Messages) < 4 {
				return llmtest.Call("read_file", `{"path":"a.txt"}`)
			}
			return llmtest.Text("Report: a.txt holds alpha.")
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("read a", "read a.txt again and again", "explore")}}
		}
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	s := h.session("loop")
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	_, log, err := s.Subagents().Read("sub-1")
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range log {
		if m.Role == "tool" {
			results = append(results, m.Text())
		}
	}
	if len(results) != 4 {
		t.Fatalf("the child has %d results; want 4", len(results))
	}
	for i, r := range results {
		blocked := strings.HasPrefix(r, "not executed: this is the")
		if want := i+1 >= guard.BlockAt; blocked != want {
			t.Errorf("call %d: blocked = %v, want %v: %q", i+1, blocked, want, r)
		}
	}
	// The child's requests still extend each other byte for byte.
	var prev []llmtest.Message
	for _, req := range h.srv.Requests() {
		if !isChildReq(req.Messages) {
			continue
		}
		if prev != nil && (len(req.Messages) < len(prev) || req.Messages[len(prev)-1].Content != prev[len(prev)-1].Content) {
			t.Error("a child request does not extend the previous one")
		}
		prev = req.Messages
	}
}
