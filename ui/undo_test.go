package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/rewind"
)

// numbered is a file of n lines "line 1" … "line n", with the lines in
// change replaced.
func numbered(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if c, ok := change[i]; ok {
			b.WriteString(c + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// The approval card shows the real diff of an edit, one tick per change;
// unticking one writes exactly the others, and the model is told which
// change was not applied.
func TestApprovalDiffWithPerHunkTicks(t *testing.T) {
	proposed := numbered(40, map[int]string{3: "three", 20: "twenty", 37: "thirty-seven"})
	args, _ := json.Marshal(map[string]string{"path": "f.txt", "content": proposed})
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("write_file", string(args)), llmtest.Text("done")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(numbered(40, nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	h.send("edit f.txt")
	it := h.pending()
	c := h.card(it)
	if c == nil || !c.DiffBox.Visible() {
		t.Fatal("the approval card shows no diff")
	}
	var checks []*widget.Check
	var text []string
	fynetest.Walk(c.DiffBox, func(o fyne.CanvasObject) bool {
		switch v := o.(type) {
		case *widget.Check:
			checks = append(checks, v)
		case *widget.RichText:
			for _, sg := range v.Segments {
				text = append(text, sg.Textual())
			}
		}
		return true
	})
	if len(checks) != 3 {
		t.Fatalf("%d hunk ticks, want 3", len(checks))
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{"   3      │ -line 3", "        3 │ +three", "       20 │ +twenty", "   4    4 │  line 4"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the diff lacks %q:\n%s", want, joined)
		}
	}
	test.Tap(checks[1]) // untick the change at line 20
	if c.Approve.Text != "Approve 2 of 3 changes" {
		t.Errorf("Approve says %q", c.Approve.Text)
	}
	test.Tap(c.Approve)
	h.waitIdle()
	got, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
	if want := numbered(40, map[int]string{3: "three", 37: "thirty-seven"}); string(got) != want {
		t.Errorf("the file holds:\n%s\nwant exactly the two ticked changes", got)
	}
	res := h.toolItem("write_file").Result
	if !strings.Contains(res, "hunk 2 of 3") {
		t.Errorf("the tool result does not name the rejected change: %q", res)
	}
}

// userRows returns the chat's rows of the user's messages in the log.
func (h *harness) userRows() []*chat.Item {
	var out []*chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemUser && it.LogIndex >= 0 {
			out = append(out, it)
		}
	}
	return out
}

// rewound reports whether the banner says a rewind was applied.
func (h *harness) rewound() bool { return strings.HasPrefix(h.ui.banner.Text(), "Rewound to turn") }

// openRewind presses "Rewind to here…" on user row i and waits for the
// dialog.
func (h *harness) openRewind(i int) {
	h.t.Helper()
	rows := h.userRows()
	if i >= len(rows) {
		h.t.Fatalf("no user row %d (have %d)", i, len(rows))
	}
	h.ui.startRewind(rows[i])
	waitShown[*rewind.Dialog](h, "the Rewind dialog")
}

// "Rewind to here…": the dialog lists the files and messages, and its
// three choices and Cancel do what they say.
func TestRewindDialogChoices(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.txt","content":"one\n"}`), llmtest.Text("wrote one"),
		llmtest.Call("write_file", `{"path":"a.txt","content":"two\n"}`), llmtest.Text("wrote two"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("first turn")
	h.waitIdle()
	h.send("second turn")
	h.waitIdle()
	file := func() string {
		b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
		if err != nil {
			return "(none)"
		}
		return string(b)
	}

	h.openRewind(1)
	if !h.shows("Files (1)") || !h.overlayShows("a.txt — ") || h.shows("Messages (0)") {
		t.Fatal("the dialog does not list the file and the messages the rewind restores")
	}
	h.tapInDialog("Cancel")
	if file() != "two\n" || len(h.userRows()) != 2 {
		t.Fatal("Cancel changed something")
	}

	h.openRewind(1)
	h.tapInDialog("Files only")
	h.waitFor("the files rewind", func() bool { return !h.ui.live.job.running && h.rewound() })
	if file() != "one\n" || len(h.userRows()) != 2 {
		t.Errorf("Files only: file %q, %d user rows", file(), len(h.userRows()))
	}

	h.openRewind(1)
	h.tapInDialog("Conversation only")
	// Opening the rewound session again hides the banner; the prompt
	// gets the message back last.
	h.waitFor("the conversation rewind", func() bool {
		return len(h.userRows()) == 1 && h.ui.input.prompt.Text != ""
	})
	if file() != "one\n" || h.ui.input.prompt.Text != "second turn" {
		t.Errorf("Conversation only: file %q, prompt %q", file(), h.ui.input.prompt.Text)
	}

	h.openRewind(0)
	h.tapInDialog("Restore files and conversation")
	h.waitFor("the full rewind", func() bool {
		return h.ui.live.sess != nil && h.ui.input.prompt.Text != "" && len(h.userRows()) == 0
	})
	if file() != "(none)" || h.ui.input.prompt.Text != "first turn" {
		t.Errorf("files and conversation: file %q, prompt %q", file(), h.ui.input.prompt.Text)
	}
}

// The Changes view lists what the session changed and reverts a file.
func TestChangesViewReverts(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"keep.txt","content":"agent\n"}`), llmtest.Text("done"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	if err := os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("change keep.txt")
	h.waitIdle()
	test.Tap(h.ui.actions.changes)
	v := waitShown[*rewind.Changes](h, "the Changes view")
	if n := countButtons(v, "Revert"); n != 1 || !h.overlayShows("keep.txt") {
		t.Fatalf("the view lists %d files; want keep.txt", n)
	}
	h.tapInDialog("Revert")
	var fresh *rewind.Changes
	h.waitFor("the refreshed view", func() bool {
		fresh, _ = shown[*rewind.Changes](h)
		return fresh != nil && fresh != v
	})
	if b, _ := os.ReadFile(filepath.Join(ws, "keep.txt")); string(b) != "mine\n" {
		t.Errorf("after Revert keep.txt holds %q", b)
	}
	if countButtons(fresh, "Revert") != 0 || !h.overlayShows("The agent has not changed any file") {
		t.Error("the view still lists keep.txt")
	}
}
