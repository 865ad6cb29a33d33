package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/color"
	"strings"

	"fyne.io/fyne/v2/theme"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// A reopened cycle's history in the chat. Each rewrite of the log is shown
// where it happened: a compaction's superseded messages come before its
// row, as they were the oldest part of the log; a rewind's superseded
// messages were the newest, so they are folded, greyed, under a row
// "Rewound to turn N · files restored: k" that sits right after the
// message the rewind went back to, and a later message follows it.

// rewindPrefix starts the reason of every rewind's rebuild record.
const rewindPrefix = "rewind to turn "

// RewindTurn returns the turn a rebuild reason rewound to, if it is a
// rewind's.
func RewindTurn(reason string) (int, bool) {
	var n int
	if !strings.HasPrefix(reason, rewindPrefix) {
		return 0, false
	}
	if _, err := fmt.Sscanf(reason[len(rewindPrefix):], "%d", &n); err != nil {
		return 0, false
	}
	return n, true
}

// rewindKey names a rewind by the first message it took out, the one it
// went back to, so the files it restored can be shown on its row once the
// chat is read from the engine again.
func rewindKey(m transcript.Message) string {
	return fmt.Sprintf("%d\x00%s", m.Time.UnixNano(), m.Body())
}

// NoteRewind remembers what a rewind did to the files (-1: they were left
// as they were) for the row of its rebuild.
func (c *View) NoteRewind(first transcript.Message, files int) {
	if c.rewound == nil {
		c.rewound = map[string]int{}
	}
	c.rewound[rewindKey(first)] = files
}

// rewindText is the row of a rewind to turn n; files is what it restored
// (-1: files left as they were), unknown when it was not done in this
// window.
func rewindText(n, files int, known bool) string {
	s := fmt.Sprintf("Rewound to turn %d", n)
	switch {
	case !known:
	case files < 0:
		s += " · files left as they were"
	default:
		s += fmt.Sprintf(" · files restored: %d", files)
	}
	return s
}

// RewindItem is the row of a rewind, with the messages it took out folded
// under it.
// msgs counts the messages it took out (a tool result has no row of its
// own).
func RewindItem(n, files int, known bool, gone []*Item, msgs int) *Item {
	for _, it := range gone {
		it.Superseded = true
	}
	return &Item{Kind: itemRewind, Text: rewindText(n, files, known), PastItems: gone, LogIndex: -1, resultLen: msgs}
}

// anchored are rows to show after the first pos messages of the log as it
// stands at some point of the history.
type anchored struct {
	pos   int
	items []*Item
}

// historyItems lays out the current cycle: every earlier rewrite of the
// log with what it superseded, then the messages the log holds now (their
// rows carry their log index).
func (c *View) historyItems(past []agent.PastRebuild, msgs []transcript.Message) []*Item {
	var out []*Item
	var pending []anchored
	for _, p := range past {
		rec := p.Record
		if n, ok := RewindTurn(rec.Reason); ok {
			at := max(rec.BeforeLen-len(p.Superseded), 0)
			scratch := &View{ByCall: map[string]*Item{}, curIndex: -1}
			var gone []*Item
			var keep []anchored
			for _, a := range pending {
				if a.pos <= at {
					keep = append(keep, a)
				}
			}
			for i := range p.Superseded {
				for _, a := range pending {
					if a.pos == at+i && a.pos > at {
						gone = append(gone, a.items...)
					}
				}
				gone = append(gone, scratch.rowsOf(p.Superseded[i:i+1], -1)...)
			}
			for _, a := range pending {
				if a.pos >= at+len(p.Superseded) && a.pos > at {
					gone = append(gone, a.items...)
				}
			}
			files, known := 0, false
			if len(p.Superseded) > 0 {
				files, known = c.rewound[rewindKey(p.Superseded[0])]
			}
			pending = append(keep, anchored{pos: at, items: []*Item{RewindItem(n, files, known, gone, len(p.Superseded))}})
			continue
		}
		// A compaction or purge rewrote mostly the oldest messages: show
		// them first, with the rewinds that went back among them.
		k := len(p.Superseded)
		for i := range p.Superseded {
			for _, a := range pending {
				if a.pos == i {
					out = append(out, a.items...)
				}
			}
			out = append(out, c.rowsOf(p.Superseded[i:i+1], -1)...)
		}
		var keep []anchored
		for _, a := range pending {
			switch {
			case a.pos == k:
				out = append(out, a.items...)
			case a.pos >= k:
				a.pos = max(a.pos+rec.AfterLen-rec.BeforeLen, 0)
				keep = append(keep, a)
			}
		}
		pending = keep
		out = append(out, RebuildItem(rewrite.Info{
			Reason: rec.Reason, TokensBefore: rec.BeforeTokens, TokensAfter: rec.AfterTokens}))
	}
	for i := range msgs {
		for _, a := range pending {
			if a.pos == i {
				out = append(out, a.items...)
			}
		}
		out = append(out, c.rowsOf(msgs[i:i+1], i)...)
	}
	for _, a := range pending {
		if a.pos >= len(msgs) {
			out = append(out, a.items...)
		}
	}
	return out
}

// rowsOf turns msgs into rows without keeping them; the first one's log
// index is index0 (-1: outside the log). A tool result fills its call's
// card and adds no row.
func (c *View) rowsOf(msgs []transcript.Message, index0 int) []*Item {
	start := len(c.Items)
	for i := range msgs {
		c.curIndex = -1
		if index0 >= 0 {
			c.curIndex = index0 + i
		}
		c.addMessage(&msgs[i])
	}
	c.curIndex = -1
	out := append([]*Item(nil), c.Items[start:]...)
	c.Items = c.Items[:start]
	return out
}

// foldToggleText is the label of a folded row's expand button: an
// earlier cycle's messages or those a rewind took out.
func foldToggleText(it *Item) string {
	if it.Kind == itemRewind {
		n := text.Plural(it.resultLen, "message")
		if it.ReasonOn {
			return "▾ Hide the " + n + " it took out"
		}
		return "▸ Show the " + n + " it took out"
	}
	return cycleToggleText(it)
}

// shownUnder counts the rows an expanded fold shows under its own row,
// with those of the folds inside it that are open.
func shownUnder(it *Item) int {
	if !it.ReasonOn {
		return 0
	}
	n := 0
	for _, p := range it.PastItems {
		n += 1 + shownUnder(p)
	}
	return n
}

// veilColor greys a row a rewind took out: the background, partly see
// through, drawn over it.
func veilColor() color.Color {
	r, g, b, _ := theme.Color(theme.ColorNameBackground).RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 150}
}

// supersededTag follows the role of a row a rewind took out.
func supersededTag(it *Item) string {
	if it.Superseded {
		return " · taken out by a rewind"
	}
	return ""
}

// bodyHash is the hex SHA-256 of a message body; a turn's SHA is a prefix
// of it.
func bodyHash(body string) string {
	h := sha256.Sum256([]byte(body))
	return hex.EncodeToString(h[:])
}
