package compaction

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

func TestArchiveBrowserSearch(t *testing.T) {
	test.NewTempApp(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.Local)
	archives := []cycle.Archive{
		{Cycle: 1, Started: t0, Ended: t0.Add(time.Hour), Brief: "Fixed calc.Add; next: Mul overflow.", Tokens: 96_000, Requests: 30,
			Messages: []transcript.Message{
				transcript.UserText("", "Fix calc.Add", t0),
				transcript.AssistantReply("Looking at calc.go", "", nil, t0),
				transcript.AssistantReply("Done with the overflow check", "", nil, t0),
			}},
		{Cycle: 2, Started: t0.Add(2 * time.Hour), Ended: t0.Add(3 * time.Hour), Brief: "Mul overflow handled.", Tokens: 80_000,
			Messages: []transcript.Message{
				transcript.UserText("", "Handle overflow in Mul", t0),
				transcript.AssistantReply("Added a check", "", nil, t0),
			}},
	}
	if got := cycleLine(archives[0]); !strings.HasPrefix(got, "Cycle 1 · 1 Mar 09:00 – 10:00 · 96k tokens · 3 messages\nFixed calc.Add") {
		t.Errorf("cycle line = %q", got)
	}
	w := test.NewTempWindow(t, widget.NewLabel(""))
	b := newArchiveBrowser(archives, w)
	w.SetContent(b.content)
	w.Resize(fyne.NewSize(900, 600))
	if b.sel != 1 || b.brief.Text != "Mul overflow handled." {
		t.Errorf("opened cycle %d with brief %q; want the newest", b.sel, b.brief.Text)
	}
	test.Type(b.search, "calc")
	if b.total != 2 || b.sel != 0 {
		t.Fatalf("search calc: %d hits, cycle %d open; want 2 hits and cycle 1 opened", b.total, b.sel)
	}
	if got := b.Hits(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("highlighted %v; want messages 0 and 1", got)
	}
	if !strings.Contains(b.status.Text, "2 matching messages in 1 cycle") || strings.Contains(b.status.Text, "1 cycles") {
		t.Errorf("status = %q", b.status.Text)
	}
	b.search.SetText("overflow")
	if b.perCycle[1] != 1 || b.perCycle[2] != 1 {
		t.Errorf("hits per cycle = %v", b.perCycle)
	}
	b.cycles.Select(1)
	if got := b.Hits(); len(got) != 1 || got[0] != 0 {
		t.Errorf("cycle 2 highlights %v; want message 0", got)
	}
	// The hit row is drawn highlighted.
	found := false
	fynetest.Walk(w.Canvas().Content(), func(o fyne.CanvasObject) bool {
		if v, ok := o.(*widget.RichText); ok && strings.HasPrefix(v.String(), "● c2:m0") {
			found = true
		}
		return true
	})
	if !found {
		t.Error("the matching message is not shown highlighted")
	}
	// Issue 12 #13: a search filters the list to its hits, and a message
	// opens whole.
	if len(b.view) != 1 || b.view[0] != 0 {
		t.Errorf("cycle 2 lists %v while searching; want only the hit 0", b.view)
	}
	b.onlyHits.SetChecked(false)
	if len(b.view) != 2 {
		t.Errorf("without the filter cycle 2 lists %v", b.view)
	}
	b.msgs.Select(1)
	if b.opened != "Added a check" {
		t.Errorf("opening message 1 shows %q", b.opened)
	}
}

// Archive lines used to show engine messages as "reminder: <system-reminder>"
// and "1 archived cycles" (issue 12 #13).
func TestArchiveExplainsEngineMessages(t *testing.T) {
	test.NewTempApp(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.Local)
	rem := transcript.Injected(transcript.KindReminder, "<system-reminder>\nThe checklist has 2 open items.\n</system-reminder>", t0)
	if got := tw.MessageLine(rem); got != "reminder the engine added for the model: The checklist has 2 open items." {
		t.Errorf("reminder line = %q", got)
	}
	st := transcript.Injected(transcript.KindStatus, "<agent_status visibility=\"internal\" state_version=\"1\">\nstep 3 of 50\n</agent_status>", t0)
	if got := tw.MessageLine(st); got != "status the engine sent to the model: step 3 of 50" {
		t.Errorf("status line = %q", got)
	}
	b := newArchiveBrowser([]cycle.Archive{{Cycle: 1, Started: t0, Messages: []transcript.Message{rem}}}, nil)
	if !strings.Contains(b.status.Text, "1 archived cycle.") {
		t.Errorf("status = %q", b.status.Text)
	}
}

// The archive browser's hint was cut, the dialog changed width as the
// search changed its status line, and counts read "1 hits".
func TestArchiveDialogKeepsItsWidthAndItsWholeHint(t *testing.T) {
	test.NewTempApp(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.Local)
	var archives []cycle.Archive
	for i := 1; i <= 3; i++ {
		archives = append(archives, cycle.Archive{Cycle: i, Started: t0, Ended: t0.Add(time.Hour), Brief: "brief",
			Messages: []transcript.Message{transcript.UserText("", "Fix calc.Add", t0), transcript.AssistantReply("unique word zebra", "", nil, t0)}})
	}
	archives[2].Messages[1] = transcript.AssistantReply("nothing here", "", nil, t0)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(960, 600))
	b, _ := openArchive(archives, w)
	pop := w.Canvas().Overlays().Top()
	size := pop.(*widget.PopUp).Content.Size()
	for _, q := range []string{"", "z", "zebra", "calc", "no such words at all in any of the archived cycles"} {
		b.search.SetText(q)
		fynetest.LayoutAll(pop)
		if got := pop.(*widget.PopUp).Content.Size(); got.Width != size.Width {
			t.Errorf("searching %q resized the dialog from %v to %v", q, size, got)
		}
		if b.status.Size().Height < b.status.MinSize().Height-0.5 || b.status.Wrapping != fyne.TextWrapWord {
			t.Errorf("searching %q cuts the hint %q (%v of %v)", q, b.status.Text, b.status.Size(), b.status.MinSize())
		}
	}
	b.search.SetText("zebra")
	var lines []string
	fynetest.Walk(b.cycles, func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok {
			lines = append(lines, l.Text)
		}
		return true
	})
	joined := strings.Join(lines, "\n")
	if strings.Contains(joined, "1 hits") || !strings.Contains(joined, "1 hit · ") {
		t.Errorf("cycle rows %q; want \"1 hit\"", joined)
	}
}

// Escape did not close the archive while its search field had the focus.
func TestEscapeInTheArchiveSearchClosesIt(t *testing.T) {
	test.NewTempApp(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.Local)
	archives := []cycle.Archive{{Cycle: 1, Started: t0, Ended: t0.Add(time.Hour), Brief: "brief",
		Messages: []transcript.Message{transcript.UserText("", "Fix calc.Add", t0)}}}
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(960, 600))
	b, _ := openArchive(archives, w)
	w.Canvas().Focus(b.search)
	b.search.SetText("calc")
	w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if n := len(w.Canvas().Overlays().List()); n != 0 {
		t.Errorf("%d dialogs open after Escape in the archive's search field", n)
	}
}
