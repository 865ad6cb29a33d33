package agent

import (
	"context"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

func TestWarmUpDiscountsTheFirstRequest(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("OK"), llmtest.Text("hello")), nil)
	s := h.session("warm")
	row, err := s.WarmUp(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if row.Kind != "warmup" || row.PromptTokens == 0 {
		t.Fatalf("warm-up row = %+v", row)
	}
	if _, err := s.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	w := reqs[0]
	if w.MaxTokens != 8 || w.Temperature == nil || *w.Temperature != 0 || len(w.Messages) != 2 {
		t.Errorf("warm-up request: max_tokens %d, temperature %v, %d messages", w.MaxTokens, w.Temperature, len(w.Messages))
	}
	first := reqs[1]
	if first.Hit == 0 || first.Hit < w.Prompt-128 {
		t.Errorf("first real request hit %d of a %d-token warm prefix", first.Hit, w.Prompt)
	}
	if len(s.Snapshot().Messages()) != 2 {
		t.Errorf("warm-up changed the conversation: %d messages", len(s.Snapshot().Messages()))
	}
	rows, _ := s.Audit().Ledger()
	if len(rows) != 2 || rows[0].Kind != "warmup" {
		t.Errorf("ledger = %+v", rows)
	}
}
