package chat

import (
	"fmt"
	"strings"

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
func cycleItem(a cycle.Archive) *Item {
	text := fmt.Sprintf("Cycle %d · %s – %s · ended at %s tokens · read-only (the model sees its hand-off brief, and can search it)",
		a.Cycle, a.Started.Local().Format("Jan 2 15:04"), a.Ended.Local().Format("15:04"), tw.TokensShort(a.Tokens))
	return &Item{Kind: ItemCycle, Text: text, past: a.Messages, CycleNo: a.Cycle}
}

// cycleToggleText is the label of a cycle row's expand button.
func cycleToggleText(it *Item) string {
	if it.ReasonOn {
		return "▾ Hide its " + text.Plural(len(it.past), "message")
	}
	return "▸ Show its " + text.Plural(len(it.past), "message")
}

// ToggleFold expands or collapses the rows folded under it: a closed
// cycle's messages or those a rewind took out.
func (c *View) ToggleFold(it *Item) {
	i := c.Index(it)
	if i < 0 {
		return
	}
	if it.ReasonOn {
		n := shownUnder(it)
		c.Items = append(c.Items[:i+1], c.Items[i+1+n:]...)
	} else {
		if it.PastItems == nil && it.Kind == ItemCycle {
			// Past rows are built apart: their call IDs never match the
			// current cycle's, and they take no approvals.
			scratch := &View{ByCall: map[string]*Item{}, curIndex: -1}
			it.PastItems = scratch.rowsOf(it.past, -1)
		}
		var shown []*Item
		for _, p := range it.PastItems {
			shown = append(shown, p)
			shown = append(shown, openRows(p)...)
		}
		rest := append([]*Item(nil), c.Items[i+1:]...)
		c.Items = append(append(c.Items[:i+1], shown...), rest...)
	}
	it.ReasonOn = !it.ReasonOn
	c.rebuild(true)
}

// openRows are the rows an open fold inside an expanded one shows again.
func openRows(it *Item) []*Item {
	if !it.ReasonOn {
		return nil
	}
	var out []*Item
	for _, p := range it.PastItems {
		out = append(out, p)
		out = append(out, openRows(p)...)
	}
	return out
}

// ToggleCycle expands or collapses a closed cycle's messages under its row.
func (c *View) ToggleCycle(it *Item) { c.ToggleFold(it) }

// UnfoldFor opens the rewind folds that hold a row of m, so a search hit
// among the messages a rewind took out can be shown.
func (c *View) UnfoldFor(m transcript.Message) {
	for again := true; again; {
		again = false
		for _, it := range c.Items {
			if it.Kind == itemRewind && !it.ReasonOn && foldHolds(it, m) {
				c.ToggleFold(it)
				again = true
				break
			}
		}
	}
}

// foldHolds reports whether the rows folded under it show m.
func foldHolds(it *Item, m transcript.Message) bool {
	for _, p := range it.PastItems {
		if MatchesMessage(p, m) || foldHolds(p, m) {
			return true
		}
	}
	return false
}

// MatchesMessage reports whether row it shows message m.
func MatchesMessage(it *Item, m transcript.Message) bool {
	switch {
	case m.Role == transcript.User && m.Kind == transcript.KindChat:
		return it.Kind == ItemUser && it.Text == m.Body()
	case m.Kind != transcript.KindChat:
		return it.Kind == ItemNotice && it.Text == noticeFor(&m)
	case m.Role == transcript.Tool:
		return it.Kind == ItemTool && it.Call.ID == m.ToolCallID
	case m.Role == transcript.Assistant && strings.TrimSpace(m.Text()) != "":
		return it.Kind == ItemAssistant && it.Text == m.Text()
	case m.Role == transcript.Assistant && len(m.ToolCalls) > 0:
		return it.Kind == ItemTool && it.Call.ID == m.ToolCalls[0].ID
	}
	return false
}

// Reveal scrolls to the row of m, expanding the closed cycle that holds it
// when it is not in the current one. It reports whether the row was found.
func (c *View) Reveal(m transcript.Message, cycleNo int, current bool) bool {
	if !current {
		c.UnfoldFor(m) // a message a rewind took out
		for _, it := range c.Items {
			if it.Kind == ItemCycle && it.CycleNo == cycleNo && !it.ReasonOn {
				c.ToggleCycle(it)
				break
			}
		}
	}
	for i, it := range c.Items {
		if MatchesMessage(it, m) {
			c.List.ScrollTo(i)
			c.Found = it
			return true
		}
	}
	return false
}
