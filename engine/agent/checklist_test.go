package agent

import (
	"context"
	"errors"
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
	items := again.Snapshot().Checklist
	if len(items) != 1 || items[0].Content != "keep me" {
		t.Errorf("reopened checklist = %+v; the failed commit left it marked saved and it was never written", items)
	}
}
