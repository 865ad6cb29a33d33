package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/purge"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/ui/compaction"
)

func TestPurgePreviewApplyAndCancel(t *testing.T) {
	f := &fakeOps{purgePlan: rewrite.PurgePreview{Plan: purge.Plan{Changes: []purge.Change{{Msg: 3, Action: "remove", Before: 2600, Because: "asked"}}, Before: 3000, After: 400}}}
	h := fakeSession(t, f)
	test.Tap(h.ui.actions.purge)
	waitShown[*compaction.PurgeView](h, "the purge preview")
	if !h.shows("remove  message 3 (2,600 tokens)") || !h.shows("History 3,000 → 400 tokens · 1 change") {
		t.Error("the purge preview does not show the plan")
	}
	h.tapInDialog("Cancel")
	h.q.drain()
	if _, n := f.counts(); n != 0 {
		t.Fatal("Cancel purged")
	}
	test.Tap(h.ui.actions.purge)
	waitShown[*compaction.PurgeView](h, "the purge preview")
	h.tapInDialog("Apply")
	h.waitFor("the purge", func() bool { _, n := f.counts(); return n == 1 && !h.ui.live.job.running })
	if !h.shows("purged: 3k → 400 tokens") {
		t.Error("the chat does not say what was purged")
	}
}
