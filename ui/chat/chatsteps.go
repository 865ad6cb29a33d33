package chat

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The current cycle of a reopened session, laid out by the engine's one
// rule of a cycle's history (transcript.History): every message where it
// was appended, each rewrite's row where it happened, with the row the
// live session showed (the record keeps it). The messages a rewind took
// out are folded under its row; those a compaction removed stay where
// they were, as the live chat showed them; the messages a rewrite wrote
// (a summary, a cleared result, a cycle's seed) have no row of their own,
// the rewrite's row stands for them.

// rewrites pairs each past rebuild with what it removed, for History.
func rewrites(past []agent.PastRebuild) []transcript.Rewrite {
	out := make([]transcript.Rewrite, len(past))
	for i, p := range past {
		out[i] = transcript.Rewrite{Record: p.Record, Gone: p.Gone}
	}
	return out
}

// shownInfo is the row a rewrite's record says the live session showed;
// an older record without it gives what the record itself holds.
func shownInfo(rec transcript.RebuildRecord) rewrite.Info {
	var info rewrite.Info
	if len(rec.Shown) > 0 && json.Unmarshal(rec.Shown, &info) == nil {
		return info
	}
	info = rewrite.Info{Reason: rec.Reason, TokensBefore: rec.BeforeTokens, TokensAfter: rec.AfterTokens, Cycle: rec.Cycle}
	if _, ok := RewindTurn(rec.Reason); ok {
		info.Kind = rewrite.Rewind
	}
	return info
}

// fold is a rewind's fold being filled: its rows start at out[start].
type fold struct {
	rewrite int
	start   int
	scratch *View
}

// stepItems turns a cycle's history into rows.
func (c *View) stepItems(past []agent.PastRebuild, steps []transcript.Step) []*Item {
	var out []*Item
	var open []fold
	infos := make([]rewrite.Info, len(past)) // each record's row, decoded once
	for i, p := range past {
		infos[i] = shownInfo(p.Record)
	}
	isRewind := func(i int) bool { return i >= 0 && infos[i].Kind == rewrite.Rewind }
	for _, st := range steps {
		switch {
		case st.Rewrite >= 0:
			info := infos[st.Rewrite]
			if info.Kind != rewrite.Rewind {
				it := RebuildItem(info)
				it.Sent = past[st.Rewrite].Record.Time
				out = append(out, it)
				continue
			}
			at := len(open)
			for k := range open {
				if open[k].rewrite == st.Rewrite {
					at = k
					break
				}
			}
			var gone []*Item
			if at < len(open) {
				gone = append(gone, out[open[at].start:]...)
				out = out[:open[at].start]
				open = open[:at]
			}
			msgs := len(past[st.Rewrite].Gone)
			n, _ := RewindTurn(info.Reason)
			files, known := 0, info.Files != nil
			if known {
				files = *info.Files
			} else if g := past[st.Rewrite].Gone; len(g) > 0 {
				files, known = c.rewound[rewindKey(g[0].Message)]
			}
			out = append(out, RewindItem(n, files, known, gone, msgs))
		case st.WrittenBy >= 0:
			// The rewrite's row stands for what it wrote.
		case isRewind(st.GoneBy):
			k := len(open) - 1
			for k >= 0 && open[k].rewrite != st.GoneBy {
				k--
			}
			if k < 0 {
				open = append(open, fold{rewrite: st.GoneBy, start: len(out), scratch: &View{ByCall: map[string]*Item{}, curIndex: -1}})
				k = len(open) - 1
			}
			out = append(out, open[k].scratch.rowsOf([]transcript.Message{st.Msg}, -1)...)
		default:
			out = append(out, c.rowsOf([]transcript.Message{st.Msg}, st.LogIndex)...)
		}
	}
	return out
}

// NoteRequests completes the rows of the rewrites SetHistory showed the
// way the live session did (NoteNextRequest): each with the size of the
// first request after it, from the session's ledger rows; the last one
// without a request after it yet waits for the next one.
func (c *View) NoteRequests(rows []ledger.Row) {
	for _, it := range c.Items {
		if it.Kind != ItemRebuild || it.Sent.IsZero() {
			continue
		}
		if r, ok := firstRequestAfter(rows, it.Sent); ok {
			it.Text += nextRequestText(r)
			c.RefreshItem(it)
		} else {
			c.AwaitNext = it
		}
	}
}

// firstRequestAfter is the first turn request sent after t.
func firstRequestAfter(rows []ledger.Row, t time.Time) (ledger.Row, bool) {
	for _, r := range rows {
		if !r.Time.Before(t) && r.Kind != ledger.KindWarmUp && r.PromptTokens > 0 {
			return r, true
		}
	}
	return ledger.Row{}, false
}

// nextRequestText is the line a rewrite's row gains once the first
// request after it is known.
func nextRequestText(r ledger.Row) string {
	return fmt.Sprintf("\nThe next request was %s tokens: the engine's reminders and status are added back on top of the rewritten history.", tw.TokensShort(r.PromptTokens))
}
