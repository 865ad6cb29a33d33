package agent

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tool"
)

var budgetsRe = regexp.MustCompile(`budgets: \{tool_calls: (\d+)/\d+, steps: (\d+)/\d+\}`)

// TestLoopGuardChecklistAndStatusEndToEnd drives a scripted model that keeps
// a checklist, repeats one call three times and then fails a tool eight
// times in a row, and checks what every request carried.
func TestLoopGuardChecklistAndStatusEndToEnd(t *testing.T) {
	var replies []llmtest.Reply
	call := func(name, args string) {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}})
	}
	call("checklist_write", `{"items":[{"content":"Find the bug","status":"in_progress"},{"content":"Fix it"},{"content":"Run the tests"}]}`)
	for i := 0; i < 3; i++ {
		call("read_file", `{"path":"a.txt"}`) // the third is blocked
	}
	call("todo_update", `{"id":"1","status":"completed"}`)
	call("checklist_update", `{"id":"2","status":"in_progress"}`)
	for i := 0; i < 8; i++ {
		call("read_file", fmt.Sprintf(`{"path":"missing-%d.txt"}`, i)) // 8 failures in a row
	}
	replies = append(replies, llmtest.Text("never reached"))
	h := newHarness(t, llmtest.Sequence(replies...), nil)
	s := h.session("guard")
	res, err := s.Run(context.Background(), "find and fix the bug")
	if res.Reason != step.ReasonHalted || err == nil || !strings.Contains(err.Error(), "read_file") {
		t.Fatalf("Run = %+v, %v; want halted naming read_file", res, err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	if len(reqs) != 14 {
		t.Fatalf("%d requests; want 14", len(reqs))
	}
	lastVersion := int64(0)
	for i, r := range reqs {
		tail := r.Messages[len(r.Messages)-1]
		tail.Content = statusOf(tail.Content) // it may be joined to the user's message
		v, ok := status.Version(tail.Content)
		if tail.Role != "user" || !ok {
			t.Fatalf("request %d does not end with a status block: %.80q", i, tail.Content)
		}
		if v <= lastVersion {
			t.Errorf("request %d state_version %d not above %d", i, v, lastVersion)
		}
		lastVersion = v
		m := budgetsRe.FindStringSubmatch(tail.Content)
		if m == nil {
			t.Fatalf("request %d status has no budgets:\n%s", i, tail.Content)
		}
		calls, _ := strconv.Atoi(m[1])
		steps, _ := strconv.Atoi(m[2])
		if calls != i || steps != i+1 {
			t.Errorf("request %d status says %d tool calls, %d steps; want %d, %d", i, calls, steps, i, i+1)
		}
		for j, msg := range r.Messages[:len(r.Messages)-1] {
			if _, old := status.Version(msg.Content); old {
				t.Errorf("request %d carries an old status at %d", i, j)
			}
		}
	}
	// The blocked third read, seen by the model in the next request.
	if got := toolResult(reqs[4], 4); !strings.Contains(got, "not executed") || !strings.Contains(got, "3rd") {
		t.Errorf("third identical call result = %q", got)
	}
	if !strings.Contains(reqs[4].Messages[len(reqs[4].Messages)-1].Content, "loop_guard") {
		t.Errorf("status after the blocked call has no loop-guard alert:\n%s", reqs[4].Messages[len(reqs[4].Messages)-1].Content)
	}
	// The checklist in the status follows the tools.
	st6 := reqs[6].Messages[len(reqs[6].Messages)-1].Content
	if !strings.Contains(st6, `#2 "Fix it" [in_progress]`) || strings.Contains(st6, "Find the bug") || !strings.Contains(st6, "phase: execute") {
		t.Errorf("status after the updates:\n%s", st6)
	}
	// Third consecutive failure carries a warning; the eighth halts.
	if got := toolResult(reqs[9], 9); !strings.Contains(got, "warning:") {
		t.Errorf("third failure result = %q", got)
	}
	msgs := s.Snapshot().Messages()
	last := msgs[len(msgs)-1]
	if !strings.Contains(last.Text(), "failed 8 times") {
		t.Errorf("last result = %q; want the halt message", last.Text())
	}
	// The checklist survives a reopen.
	again, err := Open(h.cfg, "guard")
	if err != nil {
		t.Fatal(err)
	}
	items := again.Snapshot().Checklist
	if len(items) != 3 || items[0].Status != todo.Completed || items[1].Status != todo.InProgress {
		t.Errorf("reopened checklist = %+v", items)
	}
	if ev := h.rec.kinds(EventChecklist); len(ev) != 3 {
		t.Errorf("%d checklist events; want 3", len(ev))
	}
	audit, err := again.Audit().Status()
	if err != nil || audit.Checked != 14 || len(audit.Mismatches) != 0 {
		t.Errorf("status audit = %+v, %v", audit, err)
	}
}

// statusOf returns the status block at the end of a message's content.
func statusOf(content string) string {
	if i := strings.LastIndex(content, "<agent_status"); i >= 0 {
		return content[i:]
	}
	return content
}

// toolResult returns the content of the n-th tool result (1-based) in r.
func toolResult(r llmtest.Recorded, n int) string {
	k := 0
	for _, m := range r.Messages {
		if m.Role == "tool" {
			k++
			if k == n {
				return m.Content
			}
		}
	}
	return ""
}

// TestStatusAuditDetectsTampering records a status, corrupts the stored
// text, and expects the audit to flag it.
func TestStatusAuditDetectsTampering(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("ok")), nil)
	s := h.session("audit")
	if _, err := s.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	// A renderer that disagrees with the one that produced the record.
	s.cfg.Renderer = func(st status.State) (string, error) {
		st.Steps.Used += 5
		return status.Render(st)
	}
	a, err := s.Audit().Status()
	if err != nil || a.Checked != 1 || len(a.Mismatches) != 1 {
		t.Fatalf("audit = %+v, %v; want one mismatch", a, err)
	}
}

// TestFooterFactsNeverReachTheModel runs a turn with retries and checks that
// nothing volatile — retry state, durations, costs, clock times — appears in
// any request body.
func TestFooterFactsNeverReachTheModel(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(
		llmtest.Reply{Fault: llmtest.Fault429},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}}, Delay: 20e6},
		llmtest.Text("done"),
	), nil)
	h.cfg.Now = nil // real clock: times must still not leak
	s := h.session("footer")
	if _, err := s.Run(context.Background(), "read a.txt"); err != nil {
		t.Fatal(err)
	}
	clock := regexp.MustCompile(`\d{2}:\d{2}:\d{2}|\d+(\.\d+)?\s?(ms|µs)\b|\$\d|retry|attempt|duration`)
	for i, r := range h.srv.Requests() {
		if m := clock.Find(r.Body); m != nil {
			t.Errorf("request %d contains %q", i, m)
		}
	}
}

func TestDiagnosticsAfterWrites(t *testing.T) {
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Skip("gofmt not installed")
	}
	h := newHarness(t, llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: `{"path":"ugly.go","content":"package  main\nfunc main(){}\n"}`}}},
		llmtest.Text("written"),
	), tool.ApproveAll{})
	s := h.session("diag")
	if _, err := s.Run(context.Background(), "write ugly.go"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	second := reqs[len(reqs)-1]
	found := false
	for _, m := range second.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "<diagnostics>") && strings.Contains(m.Content, "ugly.go") {
			found = true
		}
	}
	if !found {
		t.Errorf("no <diagnostics> message for ugly.go in the next request")
	}
	h.noInvalid()
}
