package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// Stop keeps what was streamed: the partial answer stays in the chat,
// marked as stopped, instead of vanishing with the turn.
func TestStopKeepsThePartialAnswer(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{Content: "Partial.\nThe parser reads tokens one by one and then builds the tree.", Fault: llmtest.FaultStallAfterContent},
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("explain the parser")
	var tail *chat.Item
	h.waitFor("the first streamed words", func() bool {
		n := len(h.ui.chat.Items)
		if n > 0 && h.ui.chat.Items[n-1].Streaming && h.ui.chat.Items[n-1].Text != "" {
			tail = h.ui.chat.Items[n-1]
			return true
		}
		return false
	})
	streamed := tail.Text
	test.Tap(h.ui.input.stop)
	h.waitIdle()
	h.q.drain()
	var kept *chat.Item
	rows := 0
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemAssistant && strings.Contains(it.Text, strings.TrimSpace(streamed)) {
			kept = it
			rows++
		}
	}
	if kept == nil {
		t.Fatalf("the streamed %q is gone from the chat: %q", streamed, h.rowTexts())
	}
	// The engine keeps what was streamed: one row, saved, not a copy.
	if rows != 1 || kept.Unsaved {
		t.Errorf("%d rows hold the stopped answer (unsaved %v); want the one the conversation keeps", rows, kept.Unsaved)
	}
	if kept.Streaming || !kept.Stopped {
		t.Errorf("the kept answer is streaming %v, stopped %v", kept.Streaming, kept.Stopped)
	}
	h.waitFor("the stopped label", func() bool { return h.shows("Assistant · stopped by you") })
}

// A reply the engine kept after a stop is marked the same way, without
// the engine's note in its text.
func TestCommittedStoppedReplyIsMarked(t *testing.T) {
	fynetest.GoldenApp(t)
	c := chat.New(func(func()) {}, nil, nil)
	m := assistantText("half an answer\n\n(stopped by the user)")
	c.Commit(&m, -1)
	it := c.Items[len(c.Items)-1]
	if !it.Stopped || it.Unsaved || it.Text != "half an answer" {
		t.Errorf("stopped %v, unsaved %v, text %q", it.Stopped, it.Unsaved, it.Text)
	}
}

func assistantText(s string) transcript.Message {
	return transcript.AssistantReply(s, "", nil, goldenTime)
}

// A reply cut short when Tally closed was labelled "stopped by you" after
// the restart: it says Tally closed.
func TestReplyCutShortByClosingIsMarkedSo(t *testing.T) {
	fynetest.GoldenApp(t)
	c := chat.New(func(func()) {}, nil, nil)
	m := assistantText("half an answer\n\n" + step.ClosedNote)
	c.Commit(&m, -1)
	it := c.Items[len(c.Items)-1]
	if it.Stopped || !it.Closed || it.Text != "half an answer" {
		t.Errorf("stopped %v, closed %v, text %q", it.Stopped, it.Closed, it.Text)
	}
	row := chat.NewMessageRow(c)
	row.Set(it)
	if fynetest.Find(row, func(l *widget.Label) bool { return strings.Contains(l.Text, "cut short when Tally closed") }) == nil {
		t.Error("the row does not say the reply was cut short when Tally closed")
	}
}
