package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// saveChecklist used to mark the list saved inside the transaction, so a
// commit that failed afterwards left it marked saved and it was never
// written: a reopened session lost the checklist.
func TestFailedCommitDoesNotMarkTheChecklistSaved(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("ok")), nil)
	s := h.session("s1")
	res := s.tools.Run(context.Background(), &s.env, "checklist_write", `{"items":[{"content":"keep me","status":"in_progress"}]}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	save := s.saveChecklist()
	if save == nil {
		t.Fatal("a changed checklist has nothing to save")
	}
	err := h.st.Update(func(tx *storage.Tx) error {
		if err := save(tx); err != nil {
			return err
		}
		return errors.New("disk full") // the rest of the commit fails
	})
	if err == nil {
		t.Fatal("the failing commit succeeded")
	}
	s.pendingList = 0 // what commit does on failure
	if err := s.commit([]transcript.Message{transcript.UserText("", "next", day)}, s.saveChecklist()); err != nil {
		t.Fatal(err)
	}
	again, err := Open(h.cfg, "s1")
	if err != nil {
		t.Fatal(err)
	}
	items := again.Checklist()
	if len(items) != 1 || items[0].Content != "keep me" {
		t.Errorf("reopened checklist = %+v; the failed commit left it marked saved and it was never written", items)
	}
}

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
	for _, m := range s.Messages() {
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

// "New cycle" pressed after a finished turn used to copy the answered
// request into the new cycle, so the model saw it as open and two user
// messages followed each other (issue 12 #3).
func TestNewCycleBetweenTurnsDoesNotRepeatTheAnsweredRequest(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("done"), llmtest.Text("brief: fixed Add"), llmtest.Text("next answer")), nil)
	s := h.session("s1")
	if _, err := s.Run(context.Background(), "fix the answered bug"); err != nil {
		t.Fatal(err)
	}
	if err := s.NewCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Messages() {
		if m.IsPlainUserText() && strings.Contains(m.Text(), "fix the answered bug") {
			t.Fatalf("the answered request was carried into the new cycle: %+v", s.Messages())
		}
	}
	if _, err := s.Run(context.Background(), "what next?"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
}
