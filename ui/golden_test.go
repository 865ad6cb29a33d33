package ui

// Golden markup tests for the main views: the chat with its tool cards,
// the checklist, the context gauge, the cache chip and the compaction
// preview dialog. Each test builds its view from the constructor the app
// uses, with fixed data (no clock, no randomness, no temporary paths in
// the rendered text), in a window of a fixed size under Fyne's test theme
// (test.NewTempApp), and compares the rendered markup with a file under
// ui/testdata/golden/. A layout change therefore shows up as a diff.
//
// Updating the goldens after an intended change:
//
//	go test ./ui -run Golden
//
// fails and writes the new markup to ui/testdata/failed/golden/<name>.xml
// (git-ignored). Review it, then copy it over and clean up:
//
//	diff -ru ui/testdata/golden ui/testdata/failed/golden
//	cp ui/testdata/failed/golden/*.xml ui/testdata/golden/ && rm -r ui/testdata/failed
//
// A new golden is made the same way: the first run fails with "Master not
// found" and writes the file under ui/testdata/failed/golden/. Goldens
// are compared byte for byte and use tabs for indentation; edit them only
// by copying.

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// goldenTime stamps every message of the golden views; timestamps are not
// rendered, but a fixed one keeps the inputs identical run to run.
var goldenTime = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// goldenTheme is Fyne's test theme with the default theme's font rule
// for monospace text: one face whatever the weight or slant. The test
// theme defines no bold monospace face (tool card titles use it), and
// measuring text in a missing face crashes the test driver.
type goldenTheme struct{ fyne.Theme }

// Font implements fyne.Theme.
func (t goldenTheme) Font(s fyne.TextStyle) fyne.Resource {
	if s.Monospace {
		s = fyne.TextStyle{Monospace: true}
	}
	return t.Theme.Font(s)
}

// goldenApp starts a test app with the golden theme; build views after it
// so they take the theme's colours.
func goldenApp(t *testing.T) {
	t.Helper()
	test.NewTempApp(t)
	test.ApplyTheme(t, goldenTheme{test.Theme()})
}

// goldenWindow opens a window of a fixed size showing content.
func goldenWindow(t *testing.T, content fyne.CanvasObject, w, h float32) fyne.Window {
	t.Helper()
	win := test.NewTempWindow(t, content)
	win.Resize(fyne.NewSize(w, h))
	return win
}

// assertGolden lays the window out as the desktop driver would have by
// the next frame and compares its canvas, overlays included, with
// testdata/golden/<name>.xml.
func assertGolden(t *testing.T, win fyne.Window, name string) {
	t.Helper()
	c := win.Canvas()
	layoutAll(c.Content())
	for _, o := range c.Overlays().List() {
		layoutAll(o)
	}
	test.AssertRendersToMarkup(t, "golden/"+name+".xml", c)
}

// layoutAll lays out every visible container and widget under o again,
// parents first. The desktop driver does this on the next frame for any
// parent whose child changed its minimum size (a chat row hiding the parts
// it does not use, a label getting its text); the test canvas only lays
// out on a resize, so without it the markup would show stale positions.
func layoutAll(o fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	switch v := o.(type) {
	case *fyne.Container:
		if v.Layout != nil {
			v.Layout.Layout(v.Objects, v.Size())
		}
		for _, c := range v.Objects {
			layoutAll(c)
		}
	case fyne.Widget:
		r := test.WidgetRenderer(v)
		r.Layout(v.Size())
		for _, c := range r.Objects() {
			layoutAll(c)
		}
	}
}

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
func goldenChat(t *testing.T) (*chatView, *queue) {
	t.Helper()
	q := &queue{}
	c := newChatView(q.post, nil, nil)
	read := transcript.ToolCall{ID: "call_read", Name: "read_file", Arguments: `{"path":"calc/calc.go"}`}
	shell := transcript.ToolCall{ID: "call_test", Name: "run_shell", Arguments: `{"command":"go test ./calc/..."}`}
	result := "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
	c.setMessages([]transcript.Message{
		transcript.UserText("", "Add is wrong: 2 + 2 gives 0. Fix it and run the tests.", goldenTime),
		transcript.AssistantReply("Let me read **calc.go** first.", "", []transcript.ToolCall{read}, goldenTime),
		transcript.ToolResult(read, result, false, goldenTime),
		transcript.AssistantReply("`Add` subtracts. I fixed it; now the tests.", "", []transcript.ToolCall{shell}, goldenTime),
	})
	done := c.byCall[read.ID]
	c.toggleResult(done)
	// As UI.showApproval does when the engine asks.
	req := tool.ApprovalRequest{CallID: shell.ID, Tool: shell.Name, Arguments: shell.Arguments,
		Summary: "run_shell go test ./calc/...", Note: "This command runs without a sandbox."}
	req.Display, _ = tool.Display(req.Tool, []byte(req.Arguments))
	pending := c.byCall[shell.ID]
	pending.approval = &pendingApproval{req: req, ch: make(chan tool.Decision, 1)}
	pending.status = toolWaiting
	c.refreshItem(pending)
	return c, q
}

func TestGoldenChatToolCards(t *testing.T) {
	goldenApp(t)
	c, q := goldenChat(t)
	win := goldenWindow(t, c.box, 760, 900)
	settle(t, q)
	// Laying the rows out shows them again, which queues their checks.
	layoutAll(win.Canvas().Content())
	settle(t, q)
	if n := len(c.items); n != 5 {
		t.Fatalf("the chat has %d rows; want the question, two replies and two tool cards", n)
	}
	assertGolden(t, win, "chat_tool_cards")
}

// goldenItems is a checklist with an item in every state.
func goldenItems() []todo.Item {
	return []todo.Item{
		{ID: "1", Content: "Read calc.go and find the bug in Add", Status: todo.Completed},
		{ID: "2", Content: "Fix Add to return a + b", Status: todo.Completed},
		{ID: "3", Content: "Run go test ./calc/...", Status: todo.InProgress},
		{ID: "4", Content: "Add a test for negative numbers", Status: todo.Pending},
		{ID: "5", Content: "Update the changelog", Status: todo.Pending},
	}
}

func TestGoldenChecklist(t *testing.T) {
	goldenApp(t)
	c := NewChecklist()
	win := goldenWindow(t, c, 420, 320)
	assertGolden(t, win, "checklist_empty")
	c.SetItems(goldenItems())
	assertGolden(t, win, "checklist")
	c.Toggle()
	assertGolden(t, win, "checklist_collapsed")
}

func TestGoldenGauge(t *testing.T) {
	goldenApp(t)
	g := NewGauge()
	win := goldenWindow(t, g, 480, 90)
	// A 128k window: auto-compaction at 128k − 20k summary reserve − 13k
	// buffer, the new cycle at 75 %; the two labels are close together.
	g.SetLevel(84_200, 128_000, true)
	g.SetThresholds(95_000, 96_000)
	assertGolden(t, win, "gauge")
	// Nearly full and partly estimated: the error colour and "≈".
	g.SetLevel(122_000, 128_000, false)
	assertGolden(t, win, "gauge_full")
}

func TestGoldenCacheChip(t *testing.T) {
	const prompt = 10_000
	for _, c := range []struct {
		name  string
		hit   int
		first bool
	}{
		{"cold", 0, true},
		{"green", 9_970, false},
		{"yellow", 6_000, false},
		{"red", 1_500, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			goldenApp(t)
			chip := NewCacheChip()
			win := goldenWindow(t, chip, 200, 48)
			chip.Set(agent.Usage{PromptTokens: prompt, CacheHitTokens: c.hit, CacheMissTokens: prompt - c.hit,
				CacheReported: true, First: c.first})
			assertGolden(t, win, "cache_chip_"+c.name)
		})
	}
}

// goldenPlan is the preview tests' sample plan at a fixed time.
func goldenPlan() (compact.Plan, []transcript.Message) { return samplePlanAt(goldenTime) }

func TestGoldenCompactionDialog(t *testing.T) {
	goldenApp(t)
	win := goldenWindow(t, &fyne.Container{}, 1000, 720)
	// No session is open, so the dialog has no model price and counts in
	// tokens: the rendered text does not depend on saved settings.
	u := &UI{win: win}
	plan, msgs := goldenPlan()
	v, _ := u.showCompactionDialog(plan, msgs, func(bool) {})
	assertGolden(t, win, "compaction_layers")
	v.tabs.SelectIndex(1)
	assertGolden(t, win, "compaction_before_after")
	v.tabs.SelectIndex(2)
	assertGolden(t, win, "compaction_pinned")
}
