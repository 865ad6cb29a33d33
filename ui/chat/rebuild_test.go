package chat

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
)

// The compaction row in the chat said 16.3k → 9.6k while the next request
// was 12.9k, because reminders are added back (issue 12 #12): the row
// names both.
func TestCompactionRowNamesTheNextRequest(t *testing.T) {
	test.NewTempApp(t)
	c := &View{}
	it := RebuildItem(rewrite.Info{Kind: rewrite.Compaction, TokensBefore: 16_300, TokensAfter: 9_600})
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
	it := RebuildItem(rewrite.Info{Kind: rewrite.Compaction, Reason: "auto compaction",
		TokensBefore: 63_000, TokensAfter: 30_000, MissTokens: 31_500, PaysBackAfter: 3.25})
	for _, want := range []string{"compacted: 63k → 30k tokens", "31.5k tokens billed as misses once", "pays back after 3.2 requests"} {
		if !strings.Contains(it.Text, want) {
			t.Errorf("row %q lacks %q", it.Text, want)
		}
	}
	if it := RebuildItem(rewrite.Info{Kind: rewrite.Purge, TokensBefore: 10, TokensAfter: 5}); strings.Contains(it.Text, "misses") {
		t.Errorf("a rewrite that cost nothing in cache terms says it did: %q", it.Text)
	}
}
