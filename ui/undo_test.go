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
	if c == nil || !c.diffBox.Visible() {
		t.Fatal("the approval card shows no diff")
	}
	var checks []*widget.Check
	var text []string
	walkTree(c.diffBox, func(o fyne.CanvasObject) bool {
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
	if c.approve.Text != "Approve 2 of 3 changes" {
		t.Errorf("Approve says %q", c.approve.Text)
	}
	test.Tap(c.approve)
	h.waitIdle()
	got, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
	if want := numbered(40, map[int]string{3: "three", 37: "thirty-seven"}); string(got) != want {
		t.Errorf("the file holds:\n%s\nwant exactly the two ticked changes", got)
	}
	res := h.toolItem("write_file").result
	if !strings.Contains(res, "hunk 2 of 3") {
		t.Errorf("the tool result does not name the rejected change: %q", res)
	}
}
