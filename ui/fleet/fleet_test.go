package fleet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/transcript"
)

// fakeHost plays the window: it runs work at once, knows the sessions'
// facts and which wait for the user, and records what was opened.
type fakeHost struct {
	waiting map[string]string
	facts   map[string]Facts
	opened  []string
}

func newFleet(t *testing.T, size fyne.Size) (*View, *fakeHost, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(size)
	h := &fakeHost{waiting: map[string]string{}, facts: map[string]Facts{}}
	v := New(Host{
		Window:   w,
		Work:     func(work func() func()) { work()() },
		Read:     func(id string, _ *agent.Session) Facts { return h.facts[id] },
		Open:     func(id string) { h.opened = append(h.opened, id) },
		Waiting:  func(id string) string { return h.waiting[id] },
		Prices:   ledger.OnePrice(ledger.Price{CacheHit: 0.07, CacheMiss: 0.27, Completion: 1.10}, true),
		MaxSteps: 50,
	})
	w.SetContent(v.Button)
	return v, h, w
}

func ev(kind agent.EventKind, step int) agent.Event {
	return agent.Event{Kind: kind, Step: step, Time: time.Now()}
}

func say(role transcript.Role, s string) agent.Event {
	e := ev(agent.EventMessage, 0)
	e.Message = &transcript.Message{Role: role, Blocks: []transcript.Block{{Type: transcript.BlockText, Text: s}}}
	return e
}

func usage(step, level, window int) agent.Event {
	e := ev(agent.EventUsage, step)
	e.Usage = &agent.Usage{Row: ledger.Row{Model: "m", PromptTokens: level, CacheHitTokens: level / 2, CompletionTokens: 100, ContextTokens: level}, Window: window}
	return e
}

// threeSessions starts three sessions' turns: A runs at step 3, B waits
// for an approval, C finished.
func threeSessions(v *View, h *fakeHost) {
	h.facts["A"] = Facts{Title: "Fix the parser", Workspace: "/src/calc", Branch: "tally/A", Window: 128000}
	h.facts["B"] = Facts{Title: "Refactor the store", Workspace: "/src/store"}
	h.facts["C"] = Facts{Title: "Write the docs", Workspace: "/src/docs", Branch: "tally/C"}
	for _, id := range []string{"A", "B", "C"} {
		v.Event(id, nil, ev(agent.EventTurnStart, 0))
		v.Event(id, nil, say(transcript.User, "task for "+id))
	}
	v.Event("A", nil, usage(3, 42000, 128000))
	e := ev(agent.EventToolStart, 3)
	e.Call = &transcript.ToolCall{Name: "read_file", Arguments: `{"path":"calc.go"}`}
	v.Event("A", nil, e)
	e = ev(agent.EventToolStart, 2)
	e.Call = &transcript.ToolCall{Name: "write_file", Arguments: `{"path":"store.go","content":"package store"}`}
	v.Event("B", nil, e)
	h.waiting["B"] = "needs approval"
	v.Refresh()
	v.Event("C", nil, say(transcript.Assistant, "## Done: the **docs** are written.\nMore detail."))
	v.Ended("C", nil, step.ReasonDone, nil)
}

// rowTexts are the texts a session's row shows.
func rowTexts(r *row) string {
	return strings.Join([]string{r.state.Text, r.title.Text, r.cost.Text, r.detail.Text, r.last.Text, r.queued.Text}, " | ")
}

// The fleet lists sessions in three states with their state labels,
// workspace, branch, context level, cost and last line, what needs the
// user first; the toolbar's button says one needs the user.
func TestFleetListsThreeStates(t *testing.T) {
	v, h, _ := newFleet(t, fyne.NewSize(960, 600))
	threeSessions(v, h)
	got := v.Entries()
	if len(got) != 3 || got[0].ID != "B" || got[1].ID != "A" || got[2].ID != "C" {
		t.Fatalf("order %v, want B (waiting), A (running), C (done)", ids(got))
	}
	if got[0].State != Waiting || got[1].State != Running || got[2].State != Done {
		t.Errorf("states %v %v %v", got[0].State, got[1].State, got[2].State)
	}
	if v.Button.Text != "1 needs you" || v.Button.Importance != widget.WarningImportance {
		t.Errorf("button %q (importance %v)", v.Button.Text, v.Button.Importance)
	}
	v.Show()
	want := map[string][]string{
		"A": {"● running · step 3/50", "Fix the parser", "/src/calc · branch tally/A · context 42k / 128k (33 %)", "running read_file calc.go", "$0."},
		"B": {"● needs approval", "Refactor the store", "/src/store", "Asks to run write_file store.go", "$0.00"},
		"C": {"● done", "Write the docs", "branch tally/C", "Done: the docs are written.", "$0.00"},
	}
	for id, parts := range want {
		r := v.rows[id]
		if r == nil {
			t.Fatalf("no row for %s", id)
		}
		s := rowTexts(r)
		for _, p := range parts {
			if !strings.Contains(s, p) {
				t.Errorf("row %s shows %q, missing %q", id, s, p)
			}
		}
	}
	if !strings.HasPrefix(v.summary.Text, "3 sessions: 1 needs you · 1 running · 1 ended") {
		t.Errorf("summary %q", v.summary.Text)
	}
	if !v.rows["A"].queue.Visible() || v.rows["C"].queue.Visible() || v.rows["A"].queueLine.Visible() {
		t.Error("Queue a prompt… is offered on an ended session, or not on a running one")
	}

	// The approval answered: B runs again, and the badge goes.
	delete(h.waiting, "B")
	v.Refresh()
	if v.rows["B"].state.Text != "● running · step 2/50" || v.Button.Text != "" || v.Button.Importance != widget.LowImportance {
		t.Errorf("after the approval: B %q, button %q", v.rows["B"].state.Text, v.Button.Text)
	}
}

// A click anywhere on a row (or its Open) closes the dialog and opens
// the session.
func TestFleetClickOpensTheSession(t *testing.T) {
	v, h, w := newFleet(t, fyne.NewSize(960, 600))
	threeSessions(v, h)
	v.Show()
	if w.Canvas().Overlays().Top() == nil {
		t.Fatal("the dialog did not open")
	}
	test.Tap(v.rows["C"])
	if len(h.opened) != 1 || h.opened[0] != "C" {
		t.Fatalf("opened %v, want C", h.opened)
	}
	if w.Canvas().Overlays().Top() != nil {
		t.Error("the dialog stayed open")
	}
	v.Show()
	test.Tap(v.rows["B"].open)
	if len(h.opened) != 2 || h.opened[1] != "B" {
		t.Errorf("opened %v, want C then B", h.opened)
	}
}

// A prompt queued for a busy session shows in its row, is handed back
// for sending when the turn ends, and can be cancelled before; after a
// Stop it is held for the next turn.
func TestFleetQueuedPrompt(t *testing.T) {
	v, h, w := newFleet(t, fyne.NewSize(960, 600))
	threeSessions(v, h)
	v.Show()
	test.Tap(v.rows["A"].queue)
	top := w.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("Queue a prompt… asked nothing")
	}
	entry := w.Canvas().Focused().(fyne.Tappable)
	test.Type(entry.(fyne.Focusable), "now run the tests")
	test.Tap(buttonIn(t, top, "Queue"))
	if got := v.rows["A"].queued.Text; got != "Queued, sent when the turn ends: now run the tests" {
		t.Fatalf("the row shows %q", got)
	}
	if v.rows["A"].queue.Visible() || !v.rows["A"].cancel.Visible() {
		t.Error("a queued row still offers Queue, or offers no Cancel")
	}
	if v.Queue("C", " ") {
		t.Error("a blank prompt was queued")
	}

	// Cancelled: nothing goes when the turn ends.
	test.Tap(v.rows["A"].cancel)
	if v.rows["A"].queued.Text != "" || v.rows["A"].queueLine.Visible() || !v.rows["A"].queue.Visible() {
		t.Errorf("after Cancel the row shows %q", v.rows["A"].queued.Text)
	}
	// Queued again: handed back when the turn ends, and shown as running.
	v.Queue("A", "now run the tests")
	prompt, send := v.Ended("A", nil, step.ReasonDone, nil)
	if !send || prompt != "now run the tests" {
		t.Fatalf("Ended handed back %q, %v", prompt, send)
	}
	if en := v.entry("A"); en.State != Running || en.Queued != "" || v.rows["A"].queued.Text != "" {
		t.Errorf("after sending: state %v, queued %q", en.State, en.Queued)
	}

	// Stopped by the user: the prompt is held, not sent.
	v.Queue("A", "and then commit")
	if _, send := v.Ended("A", nil, step.ReasonCancelled, nil); send {
		t.Error("a prompt was sent after Stop")
	}
	if got := v.rows["A"].queued.Text; !strings.HasPrefix(got, "Held") || v.rows["A"].state.Text != "● stopped" {
		t.Errorf("after Stop the row shows %q, %q", v.rows["A"].state.Text, got)
	}
	// The next turn's end sends it; a failed turn's end too.
	v.Event("A", nil, ev(agent.EventTurnStart, 0))
	if prompt, send := v.Ended("A", nil, step.ReasonFailed, errors.New("server said no")); !send || prompt != "and then commit" {
		t.Errorf("the held prompt was not sent: %q %v", prompt, send)
	}
}

// A failed turn says why in its row; Clear ended takes ended sessions
// out, and a deleted session goes.
func TestFleetFailedAndClear(t *testing.T) {
	v, h, _ := newFleet(t, fyne.NewSize(960, 600))
	threeSessions(v, h)
	v.Ended("A", nil, step.ReasonFailed, errors.New("the model server is unreachable"))
	v.Show()
	if r := v.rows["A"]; r.state.Text != "● failed" || r.last.Text != "Failed: the model server is unreachable" || r.state.Importance != widget.DangerImportance {
		t.Errorf("failed row: %q", rowTexts(r))
	}
	test.Tap(v.clear)
	if got := ids(v.Entries()); len(got) != 1 || got[0] != "B" {
		t.Errorf("after Clear ended: %v", got)
	}
	v.Forget("B")
	if len(v.Entries()) != 0 || !v.empty.Visible() || v.Button.Text != "" {
		t.Errorf("after Forget: %d entries, button %q", len(v.Entries()), v.Button.Text)
	}
}

// At both screenshot sizes, no row is wider than the dialog: long titles,
// paths and last lines are cut, not spread.
func TestFleetFitsSmallAndLargeWindows(t *testing.T) {
	for _, size := range []fyne.Size{fyne.NewSize(960, 600), fyne.NewSize(1920, 1080)} {
		v, h, w := newFleet(t, size)
		threeSessions(v, h)
		long := strings.Repeat("a very long title ", 20)
		v.Event("A", nil, say(transcript.Assistant, strings.Repeat("a long answer line ", 40)))
		h.facts["A"] = Facts{Title: long, Workspace: "/" + strings.Repeat("deep/", 60) + "calc", Window: 128000}
		v.Event("A", nil, ev(agent.EventTurnStart, 0))
		v.Show()
		if min := v.box.MinSize().Width; min > size.Width-inset {
			t.Errorf("%v: the rows need %.0f px in a %.0f px window", size, min, size.Width)
		}
		if got := w.Canvas().Overlays().Top().Size(); got.Width > size.Width || got.Height > size.Height {
			t.Errorf("%v: the dialog is %v", size, got)
		}
	}
}

func ids(list []Entry) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.ID
	}
	return out
}

// buttonIn finds the button labelled text in o.
func buttonIn(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Button:
			if x.Text == text {
				found = x
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			r := test.TempWidgetRenderer(t, x)
			for _, c := range r.Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	if found == nil {
		t.Fatalf("no %q button", text)
	}
	return found
}
