package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
)

// The preview's rows could not be opened, and a plan that changes nothing
// said "Nothing to apply" with layers "ran · 0 messages touched" and a
// before/after that grew (issue 12 #12).
func TestPreviewRowsOpenAndAnEmptyPlanSaysWhy(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	t0 := time.Now()
	msgs := []transcript.Message{
		transcript.UserText("", "Fix calc.Add, then run the tests and tell me what failed", t0),
		transcript.AssistantReply("Reading calc.go first.", "", nil, t0),
	}
	plan := compact.Plan{TokensBefore: 186, TokensAfter: 190, Threshold: 63_333, Messages: msgs, Tokens: []int{20, 10},
		Layers: []compact.LayerReport{{Name: "micro", Ran: true, TokensBefore: 186, TokensAfter: 186}, {Name: "prune", Ran: true, TokensBefore: 186, TokensAfter: 186}}}
	v := newCompactionPreview(plan, msgs, ledger.Price{}, false, w)
	if !strings.Contains(v.head.Text, "nothing would change") || strings.Contains(v.head.Text, "→ 190") {
		t.Errorf("head of an empty plan: %q", v.head.Text)
	}
	if got := LayerLine(plan.Layers[0]); !strings.Contains(got, "found nothing to change") || strings.Contains(got, "0 messages touched") {
		t.Errorf("layer line: %q", got)
	}
	v.beforeL.Select(0)
	if v.opened != "Fix calc.Add, then run the tests and tell me what failed" {
		t.Errorf("opening the first row shows %q", v.opened)
	}
}

// The compaction row in the chat said 16.3k → 9.6k while the next request
// was 12.9k, because reminders are added back (issue 12 #12): the row
// names both.
func TestCompactionRowNamesTheNextRequest(t *testing.T) {
	test.NewTempApp(t)
	c := &chat.View{}
	it := chat.RebuildItem(rewrite.Info{Kind: rewrite.Compaction, TokensBefore: 16_300, TokensAfter: 9_600})
	c.AwaitNext = it // as showRebuild leaves it
	c.NoteNextRequest(ledger.Row{Request: 5, PromptTokens: 12_900})
	if !strings.Contains(it.Text, "16.3k → 9.6k") || !strings.Contains(it.Text, "next request was 12.9k") {
		t.Errorf("row: %q", it.Text)
	}
	c.NoteNextRequest(ledger.Row{Request: 5, PromptTokens: 13_500})
	if strings.Contains(it.Text, "13.5k") {
		t.Error("a later request changed the row again")
	}
}

func TestRebuildRowSaysWhatItCostInCacheTerms(t *testing.T) {
	it := chat.RebuildItem(rewrite.Info{Kind: rewrite.Compaction, Reason: "auto compaction",
		TokensBefore: 63_000, TokensAfter: 30_000, MissTokens: 31_500, PaysBackAfter: 3.25})
	for _, want := range []string{"compacted: 63k → 30k tokens", "31.5k tokens billed as misses once", "pays back after 3.2 requests"} {
		if !strings.Contains(it.Text, want) {
			t.Errorf("row %q lacks %q", it.Text, want)
		}
	}
	if it := chat.RebuildItem(rewrite.Info{Kind: rewrite.Purge, TokensBefore: 10, TokensAfter: 5}); strings.Contains(it.Text, "misses") {
		t.Errorf("a rewrite that cost nothing in cache terms says it did: %q", it.Text)
	}
}
