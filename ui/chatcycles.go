package ui

import (
	"fmt"

	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Earlier cycles in the chat: a reopened session shows each closed cycle
// as one collapsed, read-only row in order, before the current cycle;
// expanding it inserts the cycle's messages (every one, also those a
// compaction superseded) as ordinary rows, without approval buttons.

// cycleItem is the collapsed row of a closed cycle.
func cycleItem(a cycle.Archive) *chatItem {
	text := fmt.Sprintf("Cycle %d · %s – %s · ended at %s tokens · read-only (the model sees its hand-off brief, and can search it)",
		a.Cycle, a.Started.Local().Format("Jan 2 15:04"), a.Ended.Local().Format("15:04"), tw.TokensShort(a.Tokens))
	return &chatItem{kind: itemCycle, text: text, past: a.Messages, cycleNo: a.Cycle}
}

// cycleToggleText is the label of a cycle row's expand button.
func cycleToggleText(it *chatItem) string {
	if it.reasonOn {
		return "▾ Hide its " + text.Plural(len(it.past), "message")
	}
	return "▸ Show its " + text.Plural(len(it.past), "message")
}

// toggleFold expands or collapses the rows folded under it: a closed
// cycle's messages or those a rewind took out.
func (c *chatView) toggleFold(it *chatItem) {
	i := c.index(it)
	if i < 0 {
		return
	}
	if it.reasonOn {
		n := shownUnder(it)
		c.items = append(c.items[:i+1], c.items[i+1+n:]...)
	} else {
		if it.pastItems == nil && it.kind == itemCycle {
			// Past rows are built apart: their call IDs never match the
			// current cycle's, and they take no approvals.
			scratch := &chatView{byCall: map[string]*chatItem{}, curIndex: -1}
			it.pastItems = scratch.rowsOf(it.past, -1)
		}
		var shown []*chatItem
		for _, p := range it.pastItems {
			shown = append(shown, p)
			shown = append(shown, openRows(p)...)
		}
		rest := append([]*chatItem(nil), c.items[i+1:]...)
		c.items = append(append(c.items[:i+1], shown...), rest...)
	}
	it.reasonOn = !it.reasonOn
	c.rebuild(true)
}

// openRows are the rows an open fold inside an expanded one shows again.
func openRows(it *chatItem) []*chatItem {
	if !it.reasonOn {
		return nil
	}
	var out []*chatItem
	for _, p := range it.pastItems {
		out = append(out, p)
		out = append(out, openRows(p)...)
	}
	return out
}

// toggleCycle expands or collapses a closed cycle's messages under its row.
func (c *chatView) toggleCycle(it *chatItem) { c.toggleFold(it) }

// unfoldFor opens the rewind folds that hold a row of m, so a search hit
// among the messages a rewind took out can be shown.
func (c *chatView) unfoldFor(m transcript.Message) {
	for again := true; again; {
		again = false
		for _, it := range c.items {
			if it.kind == itemRewind && !it.reasonOn && foldHolds(it, m) {
				c.toggleFold(it)
				again = true
				break
			}
		}
	}
}

// foldHolds reports whether the rows folded under it show m.
func foldHolds(it *chatItem, m transcript.Message) bool {
	for _, p := range it.pastItems {
		if matchesMessage(p, m) || foldHolds(p, m) {
			return true
		}
	}
	return false
}
