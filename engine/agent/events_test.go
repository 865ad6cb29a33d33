package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/transcript"
)

// Events promise to share no memory with the engine: a receiver that
// writes into a message it got must not change the log. Run under -race
// the receiver's writes also race with nothing.
func TestEventMessagesAreCopies(t *testing.T) {
	var got []*transcript.Message
	h := newHarness(t, llmtest.Sequence(llmtest.Call("read_file", `{"path":"a.txt"}`), llmtest.Text("done")), nil)
	h.cfg.OnEvent = func(e Event) {
		if e.Kind == EventMessage {
			got = append(got, e.Message)
		}
	}
	s := h.session("s1")
	if _, err := s.Run(context.Background(), "read a.txt"); err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		for i := range m.Blocks {
			m.Blocks[i].Text = "overwritten by the receiver"
		}
		for i := range m.ToolCalls {
			m.ToolCalls[i].Name = "overwritten"
		}
		for i := range m.Paths {
			m.Paths[i] = "overwritten"
		}
	}
	for _, m := range s.Snapshot().Messages() {
		if strings.Contains(m.Text(), "overwritten") || len(m.ToolCalls) > 0 && m.ToolCalls[0].Name == "overwritten" ||
			len(m.Paths) > 0 && m.Paths[0] == "overwritten" {
			t.Fatalf("a receiver's write reached the log: %+v", m)
		}
	}
	h.noInvalid()
}

// After a relaunch the first request may meet a cold cache: it is marked
// First like a new session's, so the app shows the chip neutral, not red
// (issue 12 #14).
func TestFirstRequestAfterReopeningIsMarkedFirst(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three")), nil)
	var firsts []bool
	h.cfg.OnEvent = func(e Event) {
		if e.Kind == EventUsage {
			firsts = append(firsts, e.Usage.First)
		}
	}
	s := h.session("s1")
	s.Run(context.Background(), "a")
	s.Run(context.Background(), "b")
	again, err := Open(h.cfg, "s1")
	if err != nil {
		t.Fatal(err)
	}
	again.Run(context.Background(), "c")
	if want := []bool{true, false, true}; len(firsts) != 3 || firsts[0] != want[0] || firsts[1] != want[1] || firsts[2] != want[2] {
		t.Errorf("First per request = %v; want %v", firsts, want)
	}
}
