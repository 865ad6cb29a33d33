package ui

// Golden markup tests for the views built on the UI: the chat with its
// tool cards and the compaction preview dialog (the widgets' own goldens
// are in ui/widget). Each test builds its view from the constructor the
// app uses, with fixed data (no clock, no randomness, no temporary paths
// in the rendered text), in a window of a fixed size under Fyne's test
// theme, and compares the rendered markup with a file under
// ui/testdata/golden/. A layout change therefore shows up as a diff; see
// package ui/internal/fynetest for how to update a golden.

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// goldenTime stamps every message of the golden views; timestamps are not
// rendered, but a fixed one keeps the inputs identical run to run.
var goldenTime = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// settle runs the chat's deferred measurements until none is left, as
// the app's event loop would between frames.
func settle(t *testing.T, q *queue) {
	t.Helper()
	for range 100 {
		if q.empty() {
			return
		}
		q.mu.Lock()
		fns := q.fns
		q.fns = nil
		q.mu.Unlock()
		for _, fn := range fns {
			fn()
		}
	}
	t.Fatal("the chat kept re-measuring its rows after 100 rounds; a row's height does not converge")
}

// goldenChat is a short coding turn: a question, an answer, a finished
// read_file call and a run_shell call waiting for approval.
func goldenChat(t *testing.T) (*chat.View, *queue) {
	t.Helper()
	q := &queue{}
	c := chat.New(q.post, nil, nil)
	read := transcript.ToolCall{ID: "call_read", Name: "read_file", Arguments: `{"path":"calc/calc.go"}`}
	shell := transcript.ToolCall{ID: "call_test", Name: "run_shell", Arguments: `{"command":"go test ./calc/..."}`}
	result := "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
	c.SetMessages([]transcript.Message{
		transcript.UserText("", "Add is wrong: 2 + 2 gives 0. Fix it and run the tests.", goldenTime),
		transcript.AssistantReply("Let me read **calc.go** first.", "", []transcript.ToolCall{read}, goldenTime),
		transcript.ToolResult(read, result, false, goldenTime),
		transcript.AssistantReply("`Add` subtracts. I fixed it; now the tests.", "", []transcript.ToolCall{shell}, goldenTime),
	})
	done := c.ByCall[read.ID]
	c.ToggleResult(done)
	// As UI.showApproval does when the engine asks.
	req := tool.ApprovalRequest{CallID: shell.ID, Tool: shell.Name, Arguments: shell.Arguments,
		Summary: "run_shell go test ./calc/...", Note: "This command runs without a sandbox."}
	req.Display, _ = tool.Display(req.Tool, []byte(req.Arguments))
	pending := c.ByCall[shell.ID]
	pending.Approval = &chat.Approval{Req: req, Ch: make(chan tool.Decision, 1)}
	pending.Status = chat.ToolWaiting
	c.RefreshItem(pending)
	return c, q
}

func TestGoldenChatToolCards(t *testing.T) {
	fynetest.GoldenApp(t)
	c, q := goldenChat(t)
	win := fynetest.Window(t, c.Box, 760, 900)
	settle(t, q)
	// Laying the rows out shows them again, which queues their checks.
	fynetest.LayoutAll(win.Canvas().Content())
	settle(t, q)
	if n := len(c.Items); n != 5 {
		t.Fatalf("the chat has %d rows; want the question, two replies and two tool cards", n)
	}
	fynetest.AssertGolden(t, win, "chat_tool_cards")
}

// goldenPlan is the preview tests' sample plan at a fixed time.
func goldenPlan() (compact.Plan, []transcript.Message) { return samplePlanAt(goldenTime) }

func TestGoldenCompactionDialog(t *testing.T) {
	fynetest.GoldenApp(t)
	win := fynetest.Window(t, &fyne.Container{}, 1000, 720)
	// No session is open, so the dialog has no model price and counts in
	// tokens: the rendered text does not depend on saved settings.
	u := &UI{win: win}
	views := compaction.New(compaction.Host{Window: win, Price: u.price})
	plan, msgs := goldenPlan()
	v, _ := views.ShowPreview(plan, msgs, func(bool) {})
	fynetest.AssertGolden(t, win, "compaction_layers")
	tabs := fynetest.Find[*container.AppTabs](v, nil)
	tabs.SelectIndex(1)
	fynetest.AssertGolden(t, win, "compaction_before_after")
	tabs.SelectIndex(2)
	fynetest.AssertGolden(t, win, "compaction_pinned")
}
