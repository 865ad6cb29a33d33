package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// New session → "In a git worktree of its own" works on a branch of its
// own; Changes → Merge into … merges it; Delete offers to remove it.
func TestSessionInAWorktreeMergesBack(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"hello.txt","content":"hello\n"}`),
		llmtest.Text("wrote it"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	repo := filepath.Join(h.dir, "repo")
	os.MkdirAll(repo, 0o755)
	gitIn := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "README"), []byte("r\n"), 0o644)
	gitIn("add", ".")
	gitIn("commit", "-qm", "first")

	h.ui.createSessionIn(repo, "in a tree", true, "", nil)
	h.waitFor("the session", func() bool { return h.ui.live != nil && h.ui.live.sess != nil })
	ws := h.ui.live.info.workspace
	if ws == repo || !strings.Contains(ws, "tally-worktrees") {
		t.Fatalf("the session works in %s, not a worktree of its own", ws)
	}
	h.send("write hello.txt")
	if it := h.pending(); it != nil {
		test.Tap(h.card(it).Approve)
	}
	h.waitIdle()
	if _, err := os.Stat(filepath.Join(repo, "hello.txt")); err == nil {
		t.Fatal("the session wrote into the repository's checkout")
	}
	test.Tap(h.ui.actions.changes)
	h.waitFor("the merge button", func() bool {
		b := buttonIn(h.ui.win.Canvas().Overlays().Top(), "Merge into repo…")
		return b != nil && b.Visible()
	})
	test.Tap(buttonIn(h.ui.win.Canvas().Overlays().Top(), "Merge into repo…"))
	h.waitFor("the merge review", func() bool { return h.ui.merging != nil })
	// The review drew git's raw text, uncoloured: it draws the diff as
	// the Changes view does, the added line in the success colour.
	if c := segmentColor(h.ui.win.Canvas().Overlays().Top(), "+hello"); c != theme.ColorNameSuccess {
		t.Errorf("the added line is drawn in %q; want the success colour", c)
	}
	test.Tap(buttonIn(h.ui.win.Canvas().Overlays().Top(), "Merge"))
	h.waitFor("the merge", func() bool { return strings.Contains(h.ui.banner.Text(), "Merged tally/") })
	if data, err := os.ReadFile(filepath.Join(repo, "hello.txt")); err != nil || string(data) != "hello\n" {
		t.Fatalf("after the merge the checkout has %q, %v", data, err)
	}
}

// segmentColor is the colour name of the first rich text segment under o
// that holds s ("" when none does).
func segmentColor(o fyne.CanvasObject, s string) fyne.ThemeColorName {
	var c fyne.ThemeColorName
	fynetest.Walk(o, func(x fyne.CanvasObject) bool {
		if rt, ok := x.(*widget.RichText); ok && c == "" {
			for _, seg := range rt.Segments {
				if ts, ok := seg.(*widget.TextSegment); ok && strings.Contains(ts.Text, s) {
					c = ts.Style.ColorName
					break
				}
			}
		}
		return c == ""
	})
	return c
}
