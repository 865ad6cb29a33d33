package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Search across sessions (Ctrl+K, or the magnifier over the session list):
// titles, prompts, answers, tool calls and results of every session and
// every cycle, archived and superseded messages included. Choosing a hit
// opens its session and scrolls the chat to the message, expanding the
// earlier cycle that holds it.

// searchDelay is how long typing pauses before a search runs.
const searchDelay = 250 * time.Millisecond

// searchView is the search dialog's state.
type searchView struct {
	widget.BaseWidget

	entry   *tw.EscEntry
	status  *widget.Label
	list    *widget.List
	hits    []workbench.SearchHit
	words   []string // the words of the search shown, lower case
	gen     int
	dlg     dialog.Dialog
	content fyne.CanvasObject
}

// CreateRenderer implements fyne.Widget.
func (v *searchView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.content) }

// showSearch opens the search dialog. While another dialog is open (a
// session's archive, its changes, Settings) it does nothing: a search
// over a session's dialog would open a hit of another session under it,
// leaving the first session's dialog over the second.
func (u *UI) showSearch() {
	if u.wb == nil || u.win.Canvas().Overlays().Top() != nil {
		return
	}
	v := &searchView{}
	v.entry = tw.NewEscEntry()
	v.entry.SetPlaceHolder("Search every session: titles, prompts, answers, tool calls (all words must match)")
	v.status = &widget.Label{Importance: widget.LowImportance, Text: "Type to search."}
	v.list = widget.NewList(
		func() int { return len(v.hits) },
		func() fyne.CanvasObject {
			return container.NewVBox(&widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis},
				&widget.RichText{Truncation: fyne.TextTruncateEllipsis})
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id >= len(v.hits) {
				return
			}
			h := v.hits[id]
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(hitPlace(h))
			rt := box.Objects[1].(*widget.RichText)
			rt.Segments = tw.MarkWords(h.Snippet, v.words) // cut by the workbench, engine blocks left out
			rt.Refresh()
		})
	v.list.OnSelected = func(id widget.ListItemID) {
		v.list.Unselect(id)
		if id < len(v.hits) {
			v.dlg.Hide()
			u.revealHit(v.hits[id])
		}
	}
	v.entry.OnChanged = func(q string) {
		v.gen++
		gen := v.gen
		u.bridge.After(searchDelay, func() {
			if gen == v.gen {
				u.runSearch(v, q)
			}
		})
	}
	v.entry.OnSubmitted = func(q string) { v.gen++; u.runSearch(v, q) }
	v.content = container.NewBorder(container.NewVBox(v.entry, v.status), nil, nil, nil, v.list)
	v.ExtendBaseWidget(v)
	v.dlg = dialog.NewCustom("Search", "Close", v, u.win)
	v.dlg.Resize(fyne.NewSize(min(860, u.win.Canvas().Size().Width-40), min(560, u.win.Canvas().Size().Height-40)))
	u.showView(v.dlg)
	u.win.Canvas().Focus(v.entry)
}

// hitPlace names where a hit is: "Title · cycle 2 (archived) · you".
func hitPlace(h workbench.SearchHit) string {
	if h.Cycle == 0 {
		return h.Title + " · title"
	}
	where := fmt.Sprintf("cycle %d", h.Cycle)
	switch {
	case h.Superseded:
		where += " (replaced by " + text.OneLine(workbench.Replacer(h.SupersededBy), 60) + ")"
	case !h.Current:
		where += " (archived)"
	}
	who := string(h.Role)
	switch {
	case h.Message.Kind != transcript.KindChat:
		who = "added by the engine"
	case h.Role == transcript.User:
		who = "you"
	case h.Role == transcript.Tool:
		who = "tool result"
	case len(h.Message.ToolCalls) > 0:
		who = "tool call"
	}
	return h.Title + " · " + where + " · " + who
}

// runSearch searches off the UI goroutine and shows the hits.
func (u *UI) runSearch(v *searchView, q string) {
	wb, gen := u.wb, v.gen
	u.bridge.Work(func() func() {
		hits, truncated, err := wb.Search(q)
		return func() {
			if gen != v.gen {
				return
			}
			v.hits, v.words = hits, strings.Fields(strings.ToLower(q))
			v.list.Refresh()
			switch {
			case err != nil:
				v.status.SetText("Could not search: " + err.Error())
			case strings.TrimSpace(q) == "":
				v.status.SetText("Type to search.")
			case len(hits) == 0:
				v.status.SetText("Nothing matches every word.")
			case truncated:
				v.status.SetText("The first " + text.Plural(len(hits), "hit") + "; add a word to narrow the search.")
			default:
				v.status.SetText(text.Plural(len(hits), "hit") + " — click one to open it")
			}
		}
	})
}

// revealHit opens the hit's session and scrolls to its message.
func (u *UI) revealHit(h workbench.SearchHit) {
	u.next.reveal = &h
	if u.live != nil && u.live.id == h.Session && u.live.sess != nil {
		u.revealPending()
		return
	}
	u.sessions.selectID(h.Session)
	u.openSession(h.Session)
}

// revealPending scrolls to the hit waiting for its session to open.
func (u *UI) revealPending() {
	h := u.next.reveal
	if h == nil || u.live == nil || u.live.id != h.Session {
		return
	}
	u.next.reveal = nil
	if h.Cycle == 0 {
		return // the title: opening the session is the answer
	}
	if !u.chat.Reveal(h.Message, h.Cycle, h.Current && !h.Superseded) {
		u.banner.ShowInfo("The message was found but is not shown in the chat (it may be an engine message that is shown folded).")
	}
}

// searchButton is the magnifier over the session list.
func (u *UI) searchButton() *widget.Button {
	return &widget.Button{Icon: theme.SearchIcon(), Importance: widget.LowImportance, OnTapped: u.showSearch}
}
