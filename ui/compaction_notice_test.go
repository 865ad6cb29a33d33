package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
)

func (f *fakeOps) PostponeCompaction() {
	f.mu.Lock()
	f.postponed++
	f.mu.Unlock()
}

func (f *fakeOps) postpones() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.postponed
}

// The engine's announcement of a coming automatic compaction shows as a
// card above the chat with the counts; Preview opens the preview dialog
// with its plan (Apply disabled while the turn runs), Not now calls the
// engine off the UI goroutine, and the compaction's row then shows the
// counts and the record, collapsed.
func TestCompactionNoticePreviewNotNowAndTheRow(t *testing.T) {
	plan, msgs := samplePlan()
	plan.Fidelity = compact.Fidelity{Verbatim: 12, Summarised: 40, Recallable: 40}
	f := &fakeOps{plan: plan, msgs: msgs}
	h := fakeSession(t, f)
	h.ui.live.job.running = true // the notice comes mid-turn

	f.emit(agent.Event{Kind: agent.EventCompactionSoon, Notice: &rewrite.Notice{Level: 57_700, Mark: 56_999, Threshold: 63_333, Plan: plan}})
	h.waitFor("the notice", func() bool { return h.ui.head.notice.Visible() })
	want := "Context at 91 % of the auto-compaction threshold (57.7k of 63.3k tokens) — the next compaction keeps 12 messages verbatim, summarises 40, 40 recallable, 0 gone."
	if got := h.ui.head.notice.Text(); got != want {
		t.Errorf("notice = %q; want %q", got, want)
	}
	if !h.shows("Context at 91 %") {
		t.Error("the notice is not on the window")
	}
	if used, _ := h.ui.side.gauge.Level(); used != 57_700 {
		t.Errorf("the gauge shows %d while the notice says 57.7k", used)
	}

	test.Tap(buttonIn(h.ui.head.notice, "Preview"))
	if _, ok := shown[*compaction.Preview](h); !ok || !h.previewLists(fmt.Sprintf("Before — %d messages", len(plan.Messages))) {
		t.Fatal("Preview did not open the preview of the notice's plan")
	}
	if apply := buttonIn(h.win.Canvas().Overlays().Top(), "Runs by itself at the threshold"); apply == nil || !apply.Disabled() {
		t.Errorf("Apply during a turn: %+v; want it disabled, saying it runs by itself", apply)
	}
	h.tapInDialog("Cancel")
	if n, _ := f.counts(); n != 0 {
		t.Fatalf("closing the preview compacted %d times", n)
	}

	test.Tap(buttonIn(h.ui.head.notice, "Not now"))
	h.waitFor("Not now", func() bool { return f.postpones() == 1 && strings.HasPrefix(h.ui.head.notice.Text(), "Not now") })
	if b := buttonIn(h.ui.head.notice, "Postponed"); b == nil || !b.Disabled() {
		t.Error("Not now can be pressed twice")
	}

	fid := compact.Fidelity{Verbatim: 12, Summarised: 40, Recallable: 40}
	f.emit(agent.Event{Kind: agent.EventRebuild, Reason: "auto compaction", Rebuild: &rewrite.Info{
		Kind: rewrite.Compaction, Reason: "auto compaction", TokensBefore: 70_100, TokensAfter: 9_800,
		Summary: "The user asked about the fixtures.", Fidelity: &fid,
		Record: "Files:\n- calc/calc.go changed +3 -1 (turn 2)\nCommands:\n- go test ./... exit 1 (turn 3)"}})
	h.waitFor("the compaction row", func() bool { return !h.ui.head.notice.Visible() })
	var row *chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemRebuild {
			row = it
		}
	}
	if row == nil {
		t.Fatal("no compaction row")
	}
	if !strings.Contains(row.Text, "kept verbatim 12 · summarised 40 · dropped but recallable 40 · gone 0") {
		t.Errorf("row = %q", row.Text)
	}
	if row.ReasonOn || row.DetailName != "Record and summary" ||
		!strings.Contains(row.Reasoning, "calc/calc.go changed +3 -1") || !strings.Contains(row.Reasoning, "The user asked about the fixtures.") ||
		strings.Index(row.Reasoning, "Record of earlier work") > strings.Index(row.Reasoning, "Summary (the model's paraphrase)") {
		t.Errorf("row detail (open %v) %q: %q", row.ReasonOn, row.DetailName, row.Reasoning)
	}
	if !h.shows("▸ Record and summary") {
		t.Error("the record is not offered collapsed under the row")
	}
}

// Between turns the notice's Preview can apply the compaction now.
func TestCompactionNoticePreviewAppliesBetweenTurns(t *testing.T) {
	plan, msgs := samplePlan()
	f := &fakeOps{plan: plan, msgs: msgs}
	h := fakeSession(t, f)
	f.emit(agent.Event{Kind: agent.EventCompactionSoon, Notice: &rewrite.Notice{Level: 58_000, Mark: 56_999, Threshold: 63_333, Plan: plan}})
	h.waitFor("the notice", func() bool { return h.ui.head.notice.Visible() })
	test.Tap(buttonIn(h.ui.head.notice, "Preview"))
	waitShown[*compaction.Preview](h, "the preview")
	h.tapInDialog("Apply")
	h.waitFor("the compaction", func() bool { n, _ := f.counts(); return n == 1 && !h.ui.live.job.running })
	if h.ui.head.notice.Visible() {
		t.Error("the notice stays after the compaction it announced")
	}
}
