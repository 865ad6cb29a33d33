package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
)

// With the status block off and the checklist left out (the bare arm of
// the real-model evaluation), no request carries a status block, the
// catalog has no checklist tool, and a model that calls one anyway gets
// an error result it can read.
func TestStatusOffAndNoChecklist(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "checklist_write", Arguments: `{"items":[{"content":"x"}]}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		llmtest.Text("done"),
	), nil)
	h.cfg.StatusMode, h.cfg.NoChecklist = status.Off, true
	s := h.session("bare")
	res, err := s.Run(context.Background(), "read a.txt")
	if err != nil || res.Reason != step.ReasonDone {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3", len(reqs))
	}
	for i, r := range reqs {
		for _, m := range r.Messages {
			if _, ok := status.Version(statusOf(m.Content)); ok {
				t.Errorf("request %d carries a status block: %.80q", i, m.Content)
			}
		}
		if slices.ContainsFunc(r.Tools, func(n string) bool { return strings.HasPrefix(n, "checklist_") || strings.HasPrefix(n, "todo_") }) {
			t.Errorf("request %d offers checklist tools: %v", i, r.Tools)
		}
	}
	if got := toolResult(reqs[1], 1); !strings.Contains(got, "checklist_write") {
		t.Errorf("the unknown checklist call's result = %q", got)
	}
	if got := toolResult(reqs[2], 2); !strings.Contains(got, "alpha") {
		t.Errorf("read_file's result = %q", got)
	}
	if n := len(s.Snapshot().Checklist); n != 0 {
		t.Errorf("the checklist has %d items", n)
	}
}
