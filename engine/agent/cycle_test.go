package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// "New cycle" pressed after a finished turn used to copy the answered
// request into the new cycle, so the model saw it as open and two user
// messages followed each other (issue 12 #3).
func TestNewCycleBetweenTurnsDoesNotRepeatTheAnsweredRequest(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("done"), llmtest.Text("brief: fixed Add"), llmtest.Text("next answer")), nil)
	s := h.session("s1")
	if _, err := s.Run(context.Background(), "fix the answered bug"); err != nil {
		t.Fatal(err)
	}
	if err := s.Compaction().NewCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Snapshot().Messages() {
		if m.IsPlainUserText() && strings.Contains(m.Text(), "fix the answered bug") {
			t.Fatalf("the answered request was carried into the new cycle: %+v", s.Snapshot().Messages())
		}
	}
	if _, err := s.Run(context.Background(), "what next?"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
}
