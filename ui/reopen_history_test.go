package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
)

// historyTurn finds the turn a prompt names.
var historyTurn = regexp.MustCompile(`turn (one|two|three|four|five|six)`)

// historyScript reads a file in each turn and answers "answer to turn
// N"; it writes a summary when asked and a hand-off brief when a cycle
// ends.
func historyScript() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(last, "This cycle is ending"):
			return llmtest.Text("<carry_forward>Decided: keep reading a.txt. Open: nothing.</carry_forward>")
		case strings.Contains(last, "Write a summary of the conversation") || strings.Contains(req.Messages[0].Content, "You summarise"):
			return llmtest.Text("Summary: a.txt was read in every turn.")
		case req.ToolResultsSinceHuman() == 0 && strings.Contains(req.LastHuman(), "delegate"):
			return llmtest.Call("task", `{"description":"Read a.txt","prompt":"Read a.txt and say what it holds.","kind":"general"}`)
		case req.ToolResultsSinceHuman() == 0:
			return llmtest.Call("read_file", `{"path":"a.txt"}`)
		}
		turns := historyTurn.FindAllString(req.LastHuman(), -1)
		if len(turns) == 0 {
			return llmtest.Text("no turn named")
		}
		return llmtest.Text("answer to " + turns[len(turns)-1])
	})
}

// chatRows describes the chat's rows as the user sees them, folds closed.
func chatRows(h *harness) []string {
	var out []string
	for _, it := range h.ui.chat.Items {
		out = append(out, fmt.Sprintf("%v|%q|gone=%v|folded=%d", it.Kind, it.Text, it.Superseded, len(it.PastItems)))
	}
	return out
}

// TestReopenedChatEqualsTheLiveOne: after a rewind, a compaction and a
// new cycle, reopening the session shows the same rows, in the same
// order, with the same figures, as the live window showed.
func TestReopenedChatEqualsTheLiveOne(t *testing.T) {
	srv := llmtest.New(historyScript())
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	writeFile(t, ws, "a.txt", strings.Repeat("a line of a.txt\n", 40))
	turn := func(text string) {
		t.Helper()
		h.send(text)
		h.waitIdle()
		h.waitFor("the ledger read again", func() bool {
			rows, err := h.ui.live.sess.Audit().Ledger()
			return err == nil && len(rows) == len(h.ui.live.rows)
		})
	}
	for _, text := range []string{"turn one", "turn two", "turn three"} {
		turn(text)
	}
	h.openRewind(2)
	h.tapInDialog("Conversation only") // the turns only read: no file to restore
	h.waitFor("the rewind", func() bool { return len(h.userRows()) == 2 && h.ui.input.prompt.Text != "" })
	h.ui.input.prompt.SetText("")
	turn("turn four")
	test.Tap(h.ui.actions.compact)
	waitShown[*compaction.Preview](h, "the compaction preview")
	h.tapInDialog("Apply")
	h.waitFor("the compaction", func() bool { return !h.ui.live.job.running && h.rowWith("compacted") >= 0 })
	turn("turn five: delegate the reading")
	if inv := srv.Invalid(); len(inv) > 0 {
		t.Fatalf("the server rejected a request: %s", inv[0].Error)
	}
	live := chatRows(h)
	for _, want := range []string{"Rewound to turn 3", "compacted", "answer to turn five"} {
		if h.rowWith(want) < 0 {
			t.Fatalf("the live chat lacks %q:\n%s", want, strings.Join(live, "\n"))
		}
	}
	sameAfterReopening(t, h, live)

	h.newCycle()
	h.waitFor("the new cycle", func() bool { return !h.ui.live.job.running && h.ui.live.sess.Snapshot().Meta.Cycle == 2 })
	h.waitFor("the chat read again after the cycle", func() bool {
		return len(h.ui.chat.Items) > 0 && h.ui.chat.Items[0].Kind == chat.ItemCycle
	})
	turn("turn six")
	live = chatRows(h)
	for _, want := range []string{"new cycle 2", "answer to turn six"} {
		if h.rowWith(want) < 0 {
			t.Fatalf("the live chat lacks %q:\n%s", want, strings.Join(live, "\n"))
		}
	}
	sameAfterReopening(t, h, live)
	// Unfolded, the closed cycle holds its prompts in order.
	cycleRow := h.ui.chat.Items[0]
	if cycleRow.Kind != chat.ItemCycle {
		t.Fatalf("the first row is %v, want the closed cycle", cycleRow.Kind)
	}
}

// figures are the counters the window shows of the session: requests,
// cost, the cache chip and the gauge.
func figures(h *harness) string {
	used, window := h.ui.side.gauge.Level()
	return fmt.Sprintf("requests %d · cost %.6f · chip %q · gauge %d of %d", len(h.ui.live.rows), h.ui.footer.State.Cost,
		h.ui.side.chip.State().Text, used, window)
}

// sameAfterReopening reopens the shown session and fails unless its chat
// shows live's rows and the window the same figures.
func sameAfterReopening(t *testing.T, h *harness, live []string) {
	t.Helper()
	liveFigures := figures(h)
	id := h.ui.live.id
	h.ui.live = nil
	h.ui.openSession(id)
	h.waitFor("the session to reopen", func() bool { return h.ui.live != nil && h.ui.live.sess != nil && h.q.empty() })
	if reopened := chatRows(h); strings.Join(live, "\n") != strings.Join(reopened, "\n") {
		t.Errorf("the reopened chat differs from the live one.\nlive:\n%s\n\nreopened:\n%s", strings.Join(live, "\n"), strings.Join(reopened, "\n"))
	}
	if got := figures(h); got != liveFigures {
		t.Errorf("the figures changed on reopening:\nlive:     %s\nreopened: %s", liveFigures, got)
	}
}
