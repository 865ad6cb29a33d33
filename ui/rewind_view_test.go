package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/rewind"
)

// rowTexts returns the text of each chat row, in order.
func (h *harness) rowTexts() []string {
	var out []string
	for _, it := range h.ui.chat.Items {
		out = append(out, it.Text)
	}
	return out
}

// rowWith returns the index of the first chat row whose text holds s, or -1.
func (h *harness) rowWith(s string) int {
	for i, t := range h.rowTexts() {
		if strings.Contains(t, s) {
			return i
		}
	}
	return -1
}

// twoTurns runs two turns that each write a.txt, in auto-edit mode.
func twoTurns(t *testing.T) *harness {
	t.Helper()
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.txt","content":"one\n"}`), llmtest.Text("wrote one"),
		llmtest.Call("write_file", `{"path":"a.txt","content":"two\n"}`), llmtest.Text("wrote two"),
	))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("first turn")
	h.waitIdle()
	h.send("second turn")
	h.waitIdle()
	return h
}

// A rewind shows as one: the messages it took out are folded, greyed,
// under a row "Rewound to turn N · files restored: k" after the turn it
// went back to, not left in the chat as they were under a "compacted" row.
func TestRewindFoldsWhatItTookOut(t *testing.T) {
	h := twoTurns(t)
	h.openRewind(1)
	h.tapInDialog("Restore files and conversation")
	h.waitFor("the rewind", func() bool { return len(h.userRows()) == 1 && h.ui.input.prompt.Text != "" })

	row := h.rowWith("Rewound to turn 2")
	if row < 0 {
		t.Fatalf("no rewind row in the chat: %q", h.rowTexts())
	}
	if got := h.ui.chat.Items[row].Text; got != "Rewound to turn 2 · files restored: 1" {
		t.Errorf("the rewind row says %q", got)
	}
	if i := h.rowWith("compacted"); i >= 0 {
		t.Errorf("the rewind is shown as a compaction: %q", h.rowTexts()[i])
	}
	if i := h.rowWith("wrote one"); i < 0 || i > row {
		t.Errorf("the rewind row (%d) does not follow the turn it went back to (%d): %q", row, i, h.rowTexts())
	}
	for _, gone := range []string{"second turn", "wrote two"} {
		if i := h.rowWith(gone); i >= 0 {
			t.Errorf("%q is still shown unfolded at row %d: %q", gone, i, h.rowTexts())
		}
	}
	if !h.shows("Rewound to turn 2 · files restored: 1") || !h.shows("▸ Show the 5 messages it took out") {
		t.Errorf("the window does not show the rewind row and its fold: %q", h.texts())
	}

	it := h.ui.chat.Items[row]
	h.ui.chat.ToggleFold(it)
	n := len(it.PastItems)
	if n == 0 || len(h.ui.chat.Items) < row+1+n {
		t.Fatalf("expanding showed %d rows", n)
	}
	for _, p := range h.ui.chat.Items[row+1 : row+1+n] {
		if !p.Superseded {
			t.Errorf("row %q is shown but not greyed", p.Text)
		}
	}
	if i := h.rowWith("second turn"); i != row+1 {
		t.Errorf("the rewound message is at row %d, want %d under the rewind", i, row+1)
	}
	h.waitFor("the open fold to say it hides them", func() bool { return h.shows("▾ Hide the 5 messages it took out") })
	h.ui.chat.ToggleFold(it)
	if h.rowWith("second turn") >= 0 {
		t.Error("collapsing left the rewound messages shown")
	}

	// A search hit among them opens the fold.
	past, err := h.ui.live.sess.Compaction().History()
	if err != nil || len(past) == 0 {
		t.Fatalf("history: %v, %d rebuilds", err, len(past))
	}
	if !h.ui.chat.Reveal(past[0].Superseded[0], 1, false) || h.rowWith("second turn") != row+1 {
		t.Error("revealing a rewound message did not open its fold")
	}
}

// A message of a cycle closed meanwhile still has its turn: the Rewind
// dialog says the turn is archived in an earlier cycle and offers the
// files, instead of calling it a message of an older Tally.
func TestRewindOfAnEarlierCycleOffersTheFiles(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.txt","content":"one\n"}`), llmtest.Text("wrote one"),
		llmtest.Text("Brief: a.txt was written."),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("first turn")
	h.waitIdle()
	row := h.userRows()[0]
	h.newCycle()
	h.waitFor("the new cycle", func() bool { return !h.ui.live.job.running && h.ui.live.sess.Snapshot().Meta.Cycle == 2 })

	h.ui.startRewind(row)
	h.waitFor("the Rewind dialog or an error", func() bool {
		_, ok := shown[*rewind.Dialog](h)
		return ok || h.ui.banner.Visible()
	})
	if strings.Contains(h.ui.banner.Text(), "older Tally") {
		t.Fatalf("the banner says %q", h.ui.banner.Text())
	}
	waitShown[*rewind.Dialog](h, "the Rewind dialog")
	if !h.overlayShows("belongs to cycle 1") {
		t.Error("the dialog does not say the turn is in cycle 1")
	}
	top := h.win.Canvas().Overlays().Top()
	chatB, both, files := buttonIn(top, "Conversation only"), buttonIn(top, "Restore files and conversation"), buttonIn(top, "Files only")
	if !chatB.Disabled() || !both.Disabled() || files.Disabled() {
		t.Fatalf("choices: conversation %v, both %v, files %v; want files only", !chatB.Disabled(), !both.Disabled(), !files.Disabled())
	}
	test.Tap(files)
	h.waitFor("the files rewind", func() bool { return !h.ui.live.job.running && h.rewound() })
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt is still there after the files rewind (%v)", err)
	}
}
