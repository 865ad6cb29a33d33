package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/subagent"
)

// TestSubagentContextIsAppendOnly (issue 19, item 6): below the
// compaction threshold of its window a sub-agent's context is its job and
// what its steps append, bounded by its step budget
// (subagent.Config.MaxSteps) and its report cap, so every request of a
// child repeats the one before it whole and adds to it; the parent's
// compaction rules apply to the report once it enters the parent's log (a
// task result is recorded by engine/record). A child that reaches its
// threshold compacts (TestSubagentCompactsToStayInItsWindow).
func TestSubagentContextIsAppendOnly(t *testing.T) {
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			if n := toolResults(r.Messages); n < 6 {
				return llmtest.Call("read_file", fmt.Sprintf(`{"path":"g%d.txt"}`, n))
			}
			return llmtest.Text("Report: six fixtures read.")
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("Read six fixtures", "Read g0.txt to g5.txt and report.", subagent.Explore)}}
		}
		return llmtest.Text("done")
	})
	sw := newSmallWindow(t, 128_000, script) // six 3K reads stay under the threshold
	s := sw.session("child-context")
	if _, err := s.Run(context.Background(), "Delegate the reading."); err != nil {
		t.Fatal(err)
	}
	sw.checkRequests(t)
	var prev []llmtest.Message
	children := 0
	for _, q := range sw.srv.Requests() {
		if !isChildReq(q.Messages) {
			continue
		}
		children++
		if len(q.Messages) <= len(prev) {
			t.Fatalf("child request %d has %d messages after %d: its context shrank", children, len(q.Messages), len(prev))
		}
		for i, m := range prev {
			if q.Messages[i].Content != m.Content || q.Messages[i].Role != m.Role {
				t.Fatalf("child request %d rewrote message %d", children, i)
			}
		}
		prev = q.Messages
	}
	if children != 7 {
		t.Fatalf("%d child requests; want 7", children)
	}
	for _, e := range sw.rec.kinds(EventRebuild) {
		if e.Subagent != nil {
			t.Errorf("a rebuild event of a sub-agent: %+v", e.Rebuild)
		}
	}
}
