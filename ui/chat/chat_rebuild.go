package chat

import (
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	tw "github.com/tally-dev/tally/ui/widget"
)

// RebuildItem is the chat row describing a log rewrite.
func RebuildItem(info rewrite.Info) *Item {
	kind := info.Kind
	text := fmt.Sprintf("compacted: %s → %s tokens", tw.TokensShort(info.TokensBefore), tw.TokensShort(info.TokensAfter))
	detail := "Summary"
	switch kind {
	case rewrite.Purge:
		text = fmt.Sprintf("purged: %s → %s tokens", tw.TokensShort(info.TokensBefore), tw.TokensShort(info.TokensAfter))
	case rewrite.Cycle:
		text = fmt.Sprintf("new cycle %d: %s → %s tokens; the earlier messages are in the Archive", info.Cycle,
			tw.TokensShort(info.TokensBefore), tw.TokensShort(info.TokensAfter))
		detail = "Hand-off brief"
	}
	if r := strings.TrimSpace(info.Reason); r != "" && !strings.Contains(r, string(kind)) {
		text += " (" + r + ")"
	}
	text += cacheCostText(info)
	if info.Fidelity != nil {
		text += "\n" + info.Fidelity.Text()
	}
	body := strings.TrimSpace(info.Summary)
	if rec := strings.TrimSpace(info.Record); rec != "" {
		// The record is computed from the tool calls: facts, shown first;
		// the summary is the model's paraphrase.
		detail = "Record and summary"
		body = "Record of earlier work (computed from the tool calls)\n" + rec
		if s := strings.TrimSpace(info.Summary); s != "" {
			body += "\n\nSummary (the model's paraphrase)\n" + s
		}
	}
	return &Item{Kind: ItemRebuild, Text: text, Reasoning: body, DetailName: detail}
}

// cacheCostText says what a rewrite cost in cache terms and when it pays
// back, for the chat's row: " · 55.2k tokens billed as misses once, pays
// back after 3.1 requests".
func cacheCostText(info rewrite.Info) string {
	if info.MissTokens <= 0 {
		return ""
	}
	s := fmt.Sprintf(" · %s tokens billed as misses once", tw.TokensShort(info.MissTokens))
	switch {
	case info.PaysBackAfter > 0:
		s += fmt.Sprintf(", pays back after %.1f requests", info.PaysBackAfter)
	case info.PaysBackAfter < 0:
		s += ", saves nothing later"
	}
	return s
}

// NoteNextRequest completes the row of the last rewrite with the size of
// the first request after it, which is what the model saw next: the
// engine's reminders and the status are added back, so it is larger than
// the rewrite's own "after" (16.3k → 9.6k, next request 12.9k).
func (c *View) NoteNextRequest(r ledger.Row) {
	it := c.AwaitNext
	if it == nil || r.Kind == ledger.KindWarmUp || r.PromptTokens == 0 {
		return
	}
	c.AwaitNext = nil
	it.Text += nextRequestText(r)
	c.RefreshItem(it)
}
