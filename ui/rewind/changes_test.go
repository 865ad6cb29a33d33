package rewind

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/diff"
	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// shownSession is a session the Changes view is opened over, without an
// engine behind it.
type shownSession struct{}

func (shownSession) Engine() *agent.Session                    { return nil }
func (shownSession) Shown() bool                               { return true }
func (shownSession) Running() bool                             { return false }
func (shownSession) Begin(string) (context.Context, bool)      { return context.Background(), true }
func (shownSession) End() bool                                 { return true }
func (shownSession) Idle()                                     {}
func (shownSession) Notice(string)                             {}
func (shownSession) Rewound([]transcript.Message, int, string) {}
func (shownSession) Merge() fyne.CanvasObject                  { return widget.NewLabel("") }

// changedFiles are n changed files, f0.txt "old" → "line 0", f1.txt …
func changedFiles(n int) (out []filehistory.FileChange) {
	for i := range n {
		path := fmt.Sprintf("f%d.txt", i)
		out = append(out, filehistory.FileChange{Path: path, Restorable: true,
			Diff: diff.Compute(path, []byte("old\n"), []byte(fmt.Sprintf("line %d\n", i)), true)})
	}
	return out
}

// The Changes view opened with every diff folded, under Fyne's carets
// (pointing down while folded): the first files' diffs are open, under
// the chat's carets, ▾ open and ▸ folded, and draw their lines in colour.
func TestChangesOpensTheFirstDiffsWithTheChatsCarets(t *testing.T) {
	fynetest.GoldenApp(t) // the diffs' bold monospace headers need its fonts
	win := fynetest.Window(t, widget.NewLabel(""), 1000, 800)
	vs := New(Host{Window: win, Work: func(w func() func()) {
		if f := w(); f != nil {
			f()
		}
	}, Info: func(string) {}, Error: func(string) {}})
	vs.openChanges(shownSession{}, changedFiles(openDiffs+2))
	dlg := win.Canvas().Overlays().Top()
	var carets []string
	fynetest.Walk(dlg, func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok && strings.HasSuffix(b.Text, "Diff since the session began") {
			carets = append(carets, strings.Fields(b.Text)[0])
		}
		return true
	})
	want := strings.Repeat("▾", openDiffs) + "▸▸"
	if got := strings.Join(carets, ""); got != want {
		t.Errorf("the diffs' toggles read %q; want %q (the first %d open)", got, want, openDiffs)
	}
	added := fynetest.Find(dlg, func(rt *widget.RichText) bool { return strings.Contains(rt.String(), "+line 0") })
	if added == nil {
		t.Fatal("the first file's diff is not shown")
	}
	for _, seg := range added.Segments {
		if ts, ok := seg.(*widget.TextSegment); ok && strings.Contains(ts.Text, "+line 0") && ts.Style.ColorName != theme.ColorNameSuccess {
			t.Errorf("the added line is drawn in %q", ts.Style.ColorName)
		}
	}
	if fynetest.Find(dlg, func(rt *widget.RichText) bool {
		return strings.Contains(rt.String(), fmt.Sprintf("+line %d", openDiffs))
	}) != nil {
		t.Errorf("the diff of file %d is open", openDiffs+1)
	}
}
