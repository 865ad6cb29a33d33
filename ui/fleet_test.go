package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/fleet"
)

// The fleet (issue 37 #5) follows three sessions of the real window
// through the engine's events: one waiting for an approval, one running,
// one done; a prompt queued for the running one is sent when its turn
// ends, in the background, and the session then ends as done.
func TestFleetFollowsTheWindowsSessions(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.txt","content":"from A"}`),   // A asks for approval
		llmtest.Text("C is done."),                                          // C finishes
		llmtest.Reply{Content: "B's first answer.", Delay: 3 * time.Second}, // B runs a while
		llmtest.Text("B ran the tests."),                                    // B's queued prompt
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	a := h.openNew("A")
	h.send("write a.txt")
	h.pending()
	c := h.openNew("C")
	h.send("hello C")
	h.waitIdle()
	b := h.openNew("B")
	h.send("hello B")
	state := func(id string) (fleet.Entry, bool) {
		for _, e := range h.ui.fleet.Entries() {
			if e.ID == id {
				return e, true
			}
		}
		return fleet.Entry{}, false
	}
	h.waitFor("B in the fleet", func() bool { e, ok := state(b); return ok && e.State == fleet.Running })
	if e, _ := state(a); e.State != fleet.Waiting || e.StateText() != "needs approval" || e.Title != "A" {
		t.Errorf("A: %v %q %q", e.State, e.StateText(), e.Title)
	}
	if e, _ := state(c); e.State != fleet.Done || e.Last != "C is done." {
		t.Errorf("C: %v, last line %q", e.State, e.Last)
	}
	if got := h.ui.fleet.Button.Text; got != "1 needs you" {
		t.Errorf("the toolbar button says %q", got)
	}

	// Ctrl+Shift+F shows the view; a queued prompt for B goes when B's
	// turn ends, while another session is shown.
	h.ui.runShortcut(shortcutFor(t, "Ctrl+Shift+F"))
	if !h.overlayShows("3 sessions: 1 needs you · 1 running · 1 ended") {
		t.Error("the fleet's dialog does not count the sessions")
	}
	if !h.ui.fleet.Queue(b, "now run the tests") || !h.overlayShows("Queued, sent when the turn ends: now run the tests") {
		t.Error("the queued prompt is not shown")
	}
	h.ui.onEscape()
	h.switchTo(c)
	h.waitFor("B's queued turn", func() bool {
		e, _ := state(b)
		return e.State == fleet.Done && strings.Contains(e.Last, "B ran the tests.")
	})
	reqs := srv.Requests()
	sent := false
	for _, m := range reqs[len(reqs)-1].Messages {
		sent = sent || m.Role == "user" && strings.Contains(m.Content, "now run the tests")
	}
	if !sent {
		t.Error("the queued prompt is not in B's last request")
	}
	if h.ui.running(b) != nil || len(h.ui.bg) != 1 {
		t.Errorf("B still runs (%v), %d sessions in the background", h.ui.running(b) != nil, len(h.ui.bg))
	}

	// Opening A from the fleet shows its approval card.
	h.ui.fleet.Show()
	h.ui.openSession(a) // what a click on the row does (tested in ui/fleet)
	h.waitFor("A's card", func() bool { return h.ui.live != nil && h.ui.live.id == a && h.ui.live.sess != nil })
	if c := h.card(h.pending()); c == nil {
		t.Error("A's approval card is not shown")
	} else {
		test.Tap(c.Approve)
		h.waitIdle()
	}
}

// shortcutFor is the window's shortcut listed as keys.
func shortcutFor(t *testing.T, keys string) *desktop.CustomShortcut {
	t.Helper()
	for _, s := range shortcuts() {
		if s.keys == keys {
			return &desktop.CustomShortcut{KeyName: s.key, Modifier: s.mod}
		}
	}
	t.Fatalf("no shortcut %s", keys)
	return nil
}
