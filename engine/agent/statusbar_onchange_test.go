package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
)

// In on-change placement a status block is appended to the log only when
// the state changed materially: an unchanged status costs nothing, every
// request extends the previous one, and the newest block in a request is
// the current state (the audit re-renders every block sent).
func TestStatusOnChangeAppendsOnlyWhatChanged(t *testing.T) {
	var replies []llmtest.Reply
	call := func(name, args string) {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}})
	}
	call("checklist_write", `{"items":[{"content":"Find the bug","status":"in_progress"},{"content":"Fix it"}]}`)
	for i := range 6 {
		call("read_file", fmt.Sprintf(`{"path":"a.txt","offset":%d}`, i+1))
		call("grep", fmt.Sprintf(`{"pattern":"alpha%d"}`, i))
	}
	call("todo_update", `{"id":"1","status":"completed"}`)
	call("read_file", `{"path":"a.txt"}`)
	replies = append(replies, llmtest.Text("done"))
	h := newHarness(t, llmtest.Sequence(replies...), nil)
	h.cfg.StatusMode = status.OnChange
	s := h.session("onchange")
	if _, err := s.Run(context.Background(), "find the bug"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	blocks := 0
	var prev []string
	for i, r := range reqs {
		var cur []string
		newest := int64(-1)
		for _, m := range r.Messages {
			b, _ := json.Marshal(m)
			cur = append(cur, string(b))
			if i := strings.Index(m.Content, "<agent_status"); i >= 0 {
				if v, ok := status.Version(m.Content[i:]); ok {
					newest = v
				}
			}
		}
		if newest < 0 {
			t.Fatalf("request %d carries no status block", i+1)
		}
		if i > 0 {
			if len(cur) < len(prev) {
				t.Fatalf("request %d is shorter than request %d", i+1, i)
			}
			for j := range prev {
				if cur[j] != prev[j] {
					t.Fatalf("request %d changed message %d of request %d: on-change placement must only append", i+1, j, i)
				}
			}
		}
		prev = cur
	}
	for _, m := range s.Snapshot().Messages() {
		if strings.Contains(m.Text(), "<agent_status") {
			blocks++
		}
	}
	if blocks < 2 || blocks >= len(reqs)/2 {
		t.Errorf("%d status blocks for %d requests: want a new block on a checklist change, none while nothing changed", blocks, len(reqs))
	}
	audit, err := s.Audit().Status()
	if err != nil || len(audit.Mismatches) > 0 || audit.Checked != blocks {
		t.Errorf("audit: %+v, %v; want every one of the %d blocks checked and matching", audit, err, blocks)
	}
	last := s.Snapshot().Messages()
	// The newest block that mentions the goals shows the current ones
	// (a delta leaves out what did not change since the block it names).
	var newestText string
	for _, m := range last {
		if strings.Contains(m.Text(), "<agent_status") && strings.Contains(m.Text(), "goals") {
			newestText = m.Text()
		}
	}
	if !strings.Contains(newestText, "1 done") {
		t.Errorf("the newest block does not show the current checklist:\n%s", newestText)
	}
}
