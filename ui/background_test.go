package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
	tw "github.com/tally-dev/tally/ui/widget"
)

// openNew creates a session titled title in a fresh workspace and waits
// until it is shown; it returns the session's ID.
func (h *harness) openNew(title string) string {
	h.t.Helper()
	ws := filepath.Join(h.dir, "ws-"+title)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		h.t.Fatal(err)
	}
	before := h.ui.live
	h.ui.createSession(ws, title)
	h.waitFor("session "+title+" to open", func() bool {
		return h.ui.live != nil && h.ui.live != before && h.ui.live.sess != nil
	})
	return h.ui.live.id
}

// switchTo opens session id from the list and waits until it is shown.
func (h *harness) switchTo(id string) {
	h.t.Helper()
	h.ui.openSession(id)
	h.waitFor("session "+id+" to show", func() bool { return h.ui.live != nil && h.ui.live.id == id && h.ui.live.sess != nil })
}

// A half-typed prompt used to follow the user into another session and be
// sent there (issue 12 #1): each session keeps its own draft, also across
// a restart.
func TestEachSessionKeepsItsOwnDraft(t *testing.T) {
	h := newHarness(t, map[string]string{})
	a := h.openNew("A")
	test.Type(h.ui.input.prompt, "half a question for A")
	b := h.openNew("B")
	if h.ui.input.prompt.Text != "" {
		t.Fatalf("the new session B opened with A's draft %q", h.ui.input.prompt.Text)
	}
	test.Type(h.ui.input.prompt, "B's own folder")
	h.switchTo(a)
	if h.ui.input.prompt.Text != "half a question for A" {
		t.Errorf("A's draft is %q", h.ui.input.prompt.Text)
	}
	test.Type(h.ui.input.prompt, ", continued")
	h.switchTo(b)
	if h.ui.input.prompt.Text != "B's own folder" {
		t.Errorf("B's draft is %q", h.ui.input.prompt.Text)
	}
	h.switchTo(a)

	// Closing the window keeps the shown session's draft; the next launch
	// restores it, and B's.
	h.ui.Close()
	h2 := reopen(t, h)
	h2.waitFor("the last session to reopen", func() bool { return h2.ui.live != nil && h2.ui.live.sess != nil })
	if h2.ui.live.id != a || h2.ui.input.prompt.Text != "half a question for A, continued" {
		t.Errorf("after a restart session %s shows draft %q", h2.ui.live.id, h2.ui.input.prompt.Text)
	}
	h2.switchTo(b)
	if h2.ui.input.prompt.Text != "B's own folder" {
		t.Errorf("after a restart B's draft is %q", h2.ui.input.prompt.Text)
	}
}

// reopen starts a new window on h's data folder, as a relaunch does.
func reopen(t *testing.T, h *harness) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	h2 := &harness{t: t, win: w, q: &queue{}, dir: h.dir}
	h2.ui = New(a, w, newBridgeWith(h2.q.post), Options{DataDir: h.dir, Env: h.ui.env})
	w.Resize(fyne.NewSize(1200, 800))
	t.Cleanup(func() { h2.ui.Close() })
	return h2
}

// After deleting the open session the right panel used to keep its gauge,
// chart and enabled buttons (issue 12 #5): every panel resets and the
// disabled buttons say why.
func TestDeletingTheOpenSessionResetsEveryPanel(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("done")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("hello")
	h.waitIdle()
	if h.ui.side.chart.Totals().Requests == 0 || h.ui.actions.compact.Disabled() {
		t.Fatalf("precondition: the chart has %d rows, Compact disabled %v", h.ui.side.chart.Totals().Requests, h.ui.actions.compact.Disabled())
	}
	h.ui.deleteSession(h.ui.live.id)
	h.waitFor("the welcome view", func() bool { return h.ui.live == nil && h.q.empty() })
	if h.ui.side.chart.Totals().Requests != 0 {
		t.Errorf("the chart still has %d requests", h.ui.side.chart.Totals().Requests)
	}
	if used, _ := h.ui.side.gauge.Level(); used != 0 {
		t.Errorf("the gauge still shows %d tokens", used)
	}
	for _, b := range []*widget.Button{h.ui.actions.compact, h.ui.actions.purge, h.ui.actions.cycle, h.ui.actions.archive, h.ui.input.send} {
		if !b.Disabled() {
			t.Errorf("%q is enabled with no session open", b.Text)
		}
	}
	if !h.ui.actions.why.Visible() || !strings.Contains(h.ui.actions.why.Text, "Open a session") {
		t.Errorf("nothing says why the buttons are off: %q", h.ui.actions.why.Text)
	}
	if strings.Contains(h.ui.footer.State.Text(time.Now()), "cost") {
		t.Errorf("the footer still shows the deleted session: %q", h.ui.footer.State.Text(time.Now()))
	}
}

// The demo's "Try:" suggestions used to stay live while a turn ran: they
// are disabled and say when they come back.
func TestSuggestionsWaitForTheTurn(t *testing.T) {
	h := newHarness(t, map[string]string{})
	h.ui.setBusyButtons(true)
	h.ui.live = &liveSession{ops: compaction.EngineOps{}}
	h.ui.setBusyButtons(true)
	var buttons int
	for _, o := range h.ui.input.suggest.Objects {
		if b, ok := o.(*widget.Button); ok {
			buttons++
			if !b.Disabled() {
				t.Errorf("suggestion %q is enabled while a turn runs", b.Text)
			}
		}
	}
	if buttons == 0 || !strings.Contains(h.ui.input.suggest.Objects[0].(*widget.Label).Text, "when the turn ends") {
		t.Errorf("the suggestions do not say why they are off")
	}
	h.ui.setBusyButtons(false)
	for _, o := range h.ui.input.suggest.Objects {
		if b, ok := o.(*widget.Button); ok && b.Disabled() {
			t.Errorf("suggestion %q stays disabled after the turn", b.Text)
		}
	}
	h.ui.live = nil
}

// A turn keeps running when the user opens another session: the list
// badges it, an approval it asks meanwhile waits (with a notification),
// and reopening the session shows the card.
func TestTwoSessionsRunAtOnce(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.txt","content":"from A"}`), // A asks for approval
		llmtest.Text("B's answer"),                                        // B runs meanwhile
		llmtest.Text("A wrote the file"),                                  // A, once approved
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	a := h.openNew("A")
	wsA := h.ui.live.sess.Snapshot().Meta.Workspace
	h.send("write a.txt")
	h.pending()
	b := h.openNew("B")
	if h.ui.running(a) == nil {
		t.Fatal("opening B stopped A's turn")
	}
	if got := h.ui.badgeOf(a); got != badgeWaiting {
		t.Errorf("A's badge is %q, want %q", got, badgeWaiting)
	}
	if !h.shows("● needs you") {
		t.Error("the session list shows no badge for A")
	}
	h.send("hello B")
	h.waitIdle()
	if !h.shows("B's answer") {
		t.Error("B's answer is not shown")
	}
	if h.ui.badgeOf(b) != badgeNone || h.ui.badgeOf(a) != badgeWaiting {
		t.Errorf("badges: A %q, B %q", h.ui.badgeOf(a), h.ui.badgeOf(b))
	}
	h.switchTo(a)
	it := h.pending()
	c := h.card(it)
	if c == nil {
		t.Fatal("A's approval card is not shown after reopening A")
	}
	test.Tap(c.Approve)
	h.waitIdle()
	if data, err := os.ReadFile(filepath.Join(wsA, "a.txt")); err != nil || string(data) != "from A" {
		t.Errorf("A's approved write: %q, %v", data, err)
	}
	if h.ui.badgeOf(a) != badgeNone || len(h.ui.bg) != 0 {
		t.Errorf("A still badged %q, %d in the background", h.ui.badgeOf(a), len(h.ui.bg))
	}
}

// Reopening a session used to show only the current cycle (issue 12 #2):
// earlier cycles are collapsed, read-only rows in order that expand to
// every message they held.
func TestReopenedSessionShowsEarlierCyclesCollapsed(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("answer one"), llmtest.Text("the hand-off brief")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("first question")
	h.waitIdle()
	h.newCycle()
	h.waitFor("the new cycle", func() bool { return !h.ui.live.job.running && h.ui.live.sess.Snapshot().Meta.Cycle == 2 })
	// Issue 12 #3: New cycle after a finished turn used to copy the
	// answered request into the new cycle, as if it were still open.
	after := -1
	for i, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemRebuild {
			after = i
		}
	}
	if after < 0 {
		t.Fatal("no row for the new cycle")
	}
	for _, it := range h.ui.chat.Items[after:] {
		if it.Kind == chat.ItemUser && it.Text == "first question" {
			t.Error("the answered request was carried into the new cycle")
		}
	}
	h.ui.Close()

	h2 := reopen(t, h)
	h2.waitFor("the session to reopen", func() bool { return h2.ui.live != nil && h2.ui.live.sess != nil })
	items := h2.ui.chat.Items
	if len(items) == 0 || items[0].Kind != chat.ItemCycle || items[0].ReasonOn {
		t.Fatalf("the chat does not start with the collapsed cycle 1: %+v", items)
	}
	has := func(text string) bool {
		for _, it := range h2.ui.chat.Items {
			if it.Text == text {
				return true
			}
		}
		return false
	}
	if has("first question") {
		t.Error("cycle 1's messages show although it is collapsed")
	}
	if !h2.shows("▸ Show its") {
		t.Error("no expand button on the cycle row")
	}
	h2.ui.chat.ToggleCycle(items[0])
	if !has("first question") || !has("answer one") {
		t.Errorf("expanding cycle 1 does not show its messages")
	}
	h2.ui.chat.ToggleCycle(h2.ui.chat.Items[0])
	if has("first question") {
		t.Error("collapsing cycle 1 left its messages")
	}
}

// A turn that ends while its session is not shown sends a desktop
// notification (and none when the user is looking at it).
func TestNotificationWhenABackgroundTurnEnds(t *testing.T) {
	slow := llmtest.Text("A is done")
	slow.Delay = 2 * time.Second // long enough to open B first, even on a loaded machine
	srv := llmtest.New(llmtest.Sequence(slow, llmtest.Text("B is done")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	a := h.openNew("A")
	h.send("slow question")
	h.openNew("B")
	h.waitFor("A to finish in the background", func() bool { return h.ui.running(a) == nil })
	if h.notes.count() != 1 {
		t.Errorf("%d notifications after A finished in the background, want 1", h.notes.count())
	}
	h.send("quick question")
	h.waitIdle()
	if h.notes.count() != 1 {
		t.Errorf("a turn the user watched in the focused window notified (%d)", h.notes.count())
	}
	h.ui.settings.NoNotifications = true
	h.ui.focused = false
	h.ui.notify("x", "y", nil)
	if h.notes.count() != 1 {
		t.Error("notifications turned off in Settings still notified")
	}
}

// The cache chip turned red "0 %" on the first request after a relaunch
// (issue 12 #14): a cold cache after a restart is neutral, as on a cold
// start.
func TestCacheChipIsNeutralAfterARelaunch(t *testing.T) {
	first := llmtest.New(llmtest.Sequence(llmtest.Text("one"), llmtest.Text("two")))
	defer first.Close()
	env := endpoint(first)
	h := newHarness(t, env)
	h.newSession()
	h.send("hello")
	h.waitIdle()
	h.send("again")
	h.waitIdle()
	h.ui.Close()
	// A new server process: its cache is cold, as a provider's may be.
	second := llmtest.New(llmtest.Sequence(llmtest.Text("three")))
	defer second.Close()
	env2 := endpoint(second)
	h.ui.env = func(k string) string { return env2[k] }
	h2 := reopen(t, h)
	h2.waitFor("the session", func() bool { return h2.ui.live != nil && h2.ui.live.sess != nil })
	h2.send("after the relaunch")
	h2.waitIdle()
	if got := h2.ui.side.chip.State(); got.Level != tw.CacheCold {
		t.Errorf("chip after a relaunch: %+v; want the neutral cold state", got)
	}
}
