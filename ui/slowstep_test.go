package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/transcript"
)

// An edit_file call that ran for 11 s while go vet checked it said only
// "running · edit_file": after a moment the footer says what runs.
func TestSlowStepSaysWhatRuns(t *testing.T) {
	old := slowStepAfter
	slowStepAfter = 20 * time.Millisecond
	t.Cleanup(func() { slowStepAfter = old })
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "ok", Delay: 3 * time.Second}))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("fix it")
	time.Sleep(200 * time.Millisecond) // the turn's start event reaches the queue
	h.q.drain()
	live := h.ui.live
	for _, c := range []struct {
		call transcript.ToolCall
		want string
	}{
		{transcript.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"calc/calc.go","old":"a - b","new":"a + b"}`}, "checking the edit of calc.go (gofmt, go vet)"},
		{transcript.ToolCall{ID: "c2", Name: "run_shell", Arguments: `{"command":"go test ./calc/..."}`}, "running go test ./calc/..."},
	} {
		h.ui.onEvent(live, agent.Event{Kind: agent.EventToolStart, Step: 2, Call: &c.call})
		if got := h.ui.footer.Text(); strings.Contains(got, c.want) {
			t.Fatalf("the footer explained %s before it was slow: %q", c.call.Name, got)
		}
		h.waitFor("the footer to say what "+c.call.Name+" does", func() bool { return strings.Contains(h.ui.footer.Text(), c.want) })
		if got := h.ui.footer.Text(); !strings.Contains(got, "running step 2/50 · "+c.want) || !strings.Contains(got, " s)") {
			t.Errorf("footer %q", got)
		}
	}
	h.ui.stop()
	h.waitIdle()
	if strings.Contains(h.ui.footer.Text(), "go test") {
		t.Errorf("the footer still explains a call after the turn: %q", h.ui.footer.Text())
	}
}
