package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
)

// Stop threw the streamed part of an answer away: the model client gave
// back nothing once its context ended, so the engine had nothing to keep.
// The text the user saw is now kept in the conversation, marked as stopped.
func TestStopKeepsTheStreamedPartOfTheAnswer(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Reply{Content: "The answer begins here and goes on", Fault: llmtest.FaultStallAfterContent}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streamed strings.Builder
	h.cfg.OnEvent = func(e Event) {
		if e.Kind == EventDelta && e.Delta != nil {
			streamed.WriteString(e.Delta.Content)
		}
	}
	s := h.session("stop")
	// The user presses Stop while the answer streams (the server has sent
	// its first piece and goes quiet).
	time.AfterFunc(300*time.Millisecond, cancel)
	res, err := s.Run(ctx, "explain")
	if err != nil || res.Reason != step.ReasonCancelled {
		t.Fatalf("Run = %+v, %v; want a cancelled turn", res, err)
	}
	msgs := s.Snapshot().Messages()
	last := msgs[len(msgs)-1]
	if last.Role != "assistant" || !strings.HasPrefix(last.Text(), "The answer b") || !strings.HasSuffix(last.Text(), "(stopped by the user)") {
		t.Fatalf("last message %s %q; want the streamed part, marked as stopped", last.Role, last.Text())
	}
	if !strings.HasPrefix(last.Text(), streamed.String()) || streamed.Len() == 0 {
		t.Fatalf("the screen saw %q, the conversation keeps %q", streamed.String(), last.Text())
	}
	if len(last.ToolCalls) != 0 {
		t.Fatal("a stopped answer kept tool calls")
	}
}

// A turn cut short because the app closed (SIGTERM, the window) was kept
// as "stopped by the user": with the host's step.ErrClosing as the cause, the
// kept part says Tally was closing.
func TestClosingMarksTheKeptPartAsCutShort(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Reply{Content: "The answer begins here and goes on", Fault: llmtest.FaultStallAfterContent}), nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	s := h.session("closing")
	time.AfterFunc(300*time.Millisecond, func() { cancel(step.ErrClosing) })
	res, err := s.Run(ctx, "explain")
	if err != nil || res.Reason != step.ReasonCancelled {
		t.Fatalf("Run = %+v, %v; want a cancelled turn", res, err)
	}
	msgs := s.Snapshot().Messages()
	last := msgs[len(msgs)-1].Text()
	if !strings.HasSuffix(last, step.ClosedNote) || strings.Contains(last, step.StoppedNote) {
		t.Fatalf("last message %q; want the streamed part marked %q", last, step.ClosedNote)
	}
}
