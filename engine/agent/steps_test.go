package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
)

// TestTurnAndSubagentShareTheRequestSteps names the steps of request
// assembly and their order, and shows that the turn's requests and a
// sub-agent's both go through them, one full pass per request, while each
// of the child's requests carries the one before it byte for byte.
func TestTurnAndSubagentShareTheRequestSteps(t *testing.T) {
	want := []string{"prefix", "log", "status", "encodings"}
	var names []string
	for _, st := range step.Steps {
		names = append(names, st.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("request steps %v, want %v", names, want)
	}

	var mu sync.Mutex
	var ran []string
	step.TraceStep = func(step string) {
		mu.Lock()
		ran = append(ran, step)
		mu.Unlock()
	}
	t.Cleanup(func() { step.TraceStep = nil })

	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			if n := toolResults(r.Messages); n < 3 {
				return llmtest.Call("read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, n))
			}
			return llmtest.Text("Report: three files read.")
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("Read three files", "Read f0.txt to f2.txt and report.", subagent.Explore)}}
		}
		return llmtest.Text("done")
	})
	sw := newSmallWindow(t, 64_000, script)
	s := sw.session("request-steps")
	if _, err := s.Run(context.Background(), "Delegate the reading."); err != nil {
		t.Fatal(err)
	}
	step.TraceStep = nil

	reqs := sw.srv.Requests()
	turn, child := 0, 0
	var prev []json.RawMessage
	for _, q := range reqs {
		if !isChildReq(q.Messages) {
			turn++
			continue
		}
		child++
		var body struct{ Messages []json.RawMessage }
		if err := json.Unmarshal(q.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Messages) <= len(prev) {
			t.Fatalf("child request %d has %d messages after %d", child, len(body.Messages), len(prev))
		}
		for i := range prev {
			if !bytes.Equal(body.Messages[i], prev[i]) {
				t.Fatalf("child request %d changed message %d:\n%s\nwas\n%s", child, i, body.Messages[i], prev[i])
			}
		}
		prev = body.Messages
	}
	if turn < 2 || child != 4 {
		t.Fatalf("%d turn and %d child requests; want at least 2 and 4", turn, child)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != len(want)*len(reqs) {
		t.Fatalf("%d steps ran for %d requests; want %d: %v", len(ran), len(reqs), len(want)*len(reqs), ran)
	}
	for i := 0; i < len(ran); i += len(want) {
		if got := ran[i : i+len(want)]; !slices.Equal(got, want) {
			t.Fatalf("request %d ran the steps %v; want %v", i/len(want)+1, got, want)
		}
	}
}
