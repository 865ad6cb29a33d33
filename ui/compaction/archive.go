package compaction

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// cycleLine describes an archived cycle in the list: its number, dates,
// size and the start of its hand-off brief.
func cycleLine(a cycle.Archive) string {
	when := a.Started.Local().Format("2 Jan 15:04")
	if !a.Ended.IsZero() {
		end := a.Ended.Local().Format("15:04")
		if a.Ended.YearDay() != a.Started.YearDay() || a.Ended.Year() != a.Started.Year() {
			end = a.Ended.Local().Format("2 Jan 15:04")
		}
		when += " – " + end
	}
	s := fmt.Sprintf("Cycle %d · %s · %s tokens · %s", a.Cycle, when, tw.TokensShort(a.Tokens), text.Plural(len(a.Messages), "message"))
	if b := text.FirstLine(a.Brief, 90); b != "" {
		s += "\n" + b
	}
	return s
}

// archiveBrowser shows the closed cycles of a session, read-only: their
// briefs and messages, searchable with cycle.Search. Nothing shown here is
// sent to the model; only the recall_archive tool can bring it back.
type archiveBrowser struct {
	archives []cycle.Archive
	sel      int // index into archives, -1 none
	query    string
	hits     map[int]bool // message indexes of the selected cycle that match
	perCycle map[int]int  // hits per cycle number
	total    int
	first    int    // the open cycle's first hit, -1 none
	view     []int  // message indexes listed: every one, or only the hits
	opened   string // the text of the message last opened, for tests
	win      fyne.Window
	onlyHits *widget.Check

	search  *tw.EscEntry
	status  *widget.Label
	cycles  *widget.List
	brief   *widget.Label
	msgs    *widget.List
	content fyne.CanvasObject
}

func newArchiveBrowser(archives []cycle.Archive, win fyne.Window) *archiveBrowser {
	b := &archiveBrowser{archives: archives, sel: -1, win: win}
	b.onlyHits = widget.NewCheck("Only matching messages", func(bool) { b.markHits() })
	b.onlyHits.Checked = true
	b.search = tw.NewEscEntry() // Escape closes the archive, also while typing a search
	b.search.SetPlaceHolder("Search every archived message (all words must match)")
	b.search.OnChanged = b.setQuery
	// Wrapped: a long status would otherwise be cut, and widen the dialog
	// as the search changes it.
	b.status = &widget.Label{Importance: widget.MediumImportance, Wrapping: fyne.TextWrapWord}
	b.brief = &widget.Label{Wrapping: fyne.TextWrapWord}
	b.cycles = widget.NewList(
		func() int { return len(b.archives) },
		func() fyne.CanvasObject {
			return &widget.Label{Wrapping: fyne.TextWrapOff, Truncation: fyne.TextTruncateEllipsis}
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id >= len(b.archives) {
				return
			}
			a := b.archives[id]
			s := cycleLine(a)
			if n := b.perCycle[a.Cycle]; b.query != "" {
				s = text.Plural(n, "hit") + " · " + s
			}
			o.(*widget.Label).SetText(s)
		})
	b.cycles.OnSelected = func(id widget.ListItemID) { b.open(id) }
	b.msgs = widget.NewList(
		func() int { return len(b.view) },
		func() fyne.CanvasObject { return tw.StyledText("", theme.ColorNameForeground, false) },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if b.sel < 0 || id >= len(b.view) {
				return
			}
			i := b.view[id]
			m := b.archives[b.sel].Messages[i]
			text := fmt.Sprintf("%s  %s", cycle.Handle(b.archives[b.sel].Cycle, i), tw.MessageLine(m))
			color := theme.ColorNameForeground
			if b.hits[i] {
				text, color = "● "+text, theme.ColorNamePrimary
			}
			tw.SetStyledText(o.(*widget.RichText), text, color, b.hits[i])
		})
	b.msgs.OnSelected = func(id widget.ListItemID) {
		b.msgs.Unselect(id)
		if id < len(b.view) {
			b.openMessage(b.view[id])
		}
	}
	b.updateStatus()
	right := container.NewVSplit(
		container.NewBorder(boldLabel("Hand-off brief"), nil, nil, nil, container.NewVScroll(b.brief)),
		container.NewBorder(container.NewBorder(nil, nil, boldLabel("Messages (read-only; click one to read it whole)"), b.onlyHits), nil, nil, nil, b.msgs))
	right.Offset = 0.35
	split := container.NewHSplit(b.cycles, right)
	split.Offset = 0.4
	b.content = container.NewBorder(container.NewVBox(b.search, b.status), nil, nil, nil, split)
	if len(archives) > 0 {
		b.cycles.Select(len(archives) - 1)
	}
	return b
}

// setQuery runs a search and marks the hits.
func (b *archiveBrowser) setQuery(q string) {
	b.query = strings.TrimSpace(q)
	b.perCycle = map[int]int{}
	b.total = 0
	if b.query != "" {
		res := cycle.Search(b.archives, b.query, 1, cycle.MaxPageSize)
		b.total = res.Total
		// Count every hit per cycle; Search pages, so walk all pages.
		for page := 1; ; page++ {
			if page > 1 {
				res = cycle.Search(b.archives, b.query, page, cycle.MaxPageSize)
			}
			for _, h := range res.Hits {
				b.perCycle[h.Cycle]++
			}
			if page >= res.Pages() {
				break
			}
		}
	}
	b.markHits()
	b.cycles.Refresh()
	b.updateStatus()
	// Jump to the newest cycle with hits when the open one has none.
	if b.query != "" && (b.sel < 0 || b.perCycle[b.archives[b.sel].Cycle] == 0) {
		for i := len(b.archives) - 1; i >= 0; i-- {
			if b.perCycle[b.archives[i].Cycle] > 0 {
				b.cycles.Select(i)
				break
			}
		}
	}
}

// markHits recomputes the hits of the selected cycle and scrolls to the
// first one.
func (b *archiveBrowser) markHits() {
	b.hits = map[int]bool{}
	defer b.setView()
	if b.sel < 0 || b.query == "" {
		return
	}
	a := b.archives[b.sel]
	only := []cycle.Archive{a}
	first := -1
	for page := 1; ; page++ {
		res := cycle.Search(only, b.query, page, cycle.MaxPageSize)
		for _, h := range res.Hits {
			b.hits[h.Index] = true
			if first < 0 || h.Index < first {
				first = h.Index
			}
		}
		if page >= res.Pages() {
			break
		}
	}
	b.first = first
}

// setView lists the open cycle's messages — only the hits while a search
// filters — and scrolls to the first hit.
func (b *archiveBrowser) setView() {
	b.view = b.view[:0]
	if b.sel >= 0 {
		filter := b.query != "" && b.onlyHits.Checked
		for i := range b.archives[b.sel].Messages {
			if !filter || b.hits[i] {
				b.view = append(b.view, i)
			}
		}
	}
	b.msgs.Refresh()
	for row, i := range b.view {
		if b.hits[i] {
			b.msgs.ScrollTo(row)
			break
		}
	}
}

// openMessage shows message i of the open cycle whole, selectable.
func (b *archiveBrowser) openMessage(i int) {
	if b.sel < 0 || i >= len(b.archives[b.sel].Messages) {
		return
	}
	a := b.archives[b.sel]
	m := a.Messages[i]
	b.opened = tw.FullText(m)
	body := &widget.Entry{MultiLine: true, Wrapping: fyne.TextWrapWord, Text: b.opened}
	body.TextStyle.Monospace = m.Role == transcript.Tool
	title := fmt.Sprintf("%s · %s", cycle.Handle(a.Cycle, i), tw.MessageLine(m))
	if b.win == nil {
		return
	}
	d := dialog.NewCustom(text.FirstLine(title, 80), "Close", container.NewScroll(body), b.win)
	d.Resize(fyne.NewSize(820, 560))
	d.Show()
}

// open shows cycle i's brief and messages.
func (b *archiveBrowser) open(i int) {
	if i < 0 || i >= len(b.archives) {
		return
	}
	b.sel = i
	a := b.archives[i]
	brief := strings.TrimSpace(a.Brief)
	if brief == "" {
		brief = "This cycle has no hand-off brief."
	}
	b.brief.SetText(brief)
	b.markHits()
	b.msgs.Refresh()
	b.updateStatus()
}

// Hits returns the highlighted message indexes of the open cycle.
func (b *archiveBrowser) Hits() []int {
	var out []int
	if b.sel < 0 {
		return out
	}
	for i := range b.archives[b.sel].Messages {
		if b.hits[i] {
			out = append(out, i)
		}
	}
	return out
}

func (b *archiveBrowser) updateStatus() {
	switch {
	case len(b.archives) == 0:
		b.status.SetText("No cycles are archived yet: a session archives its messages when it starts a new cycle.")
	case b.query == "":
		b.status.SetText(fmt.Sprintf("%s. They are shown here only; the model sees them only through recall_archive. Lines starting with a label such as \"reminder the engine added\" are messages Tally added for the model, not yours.",
			text.Plural(len(b.archives), "archived cycle")))
	case b.total == 0:
		b.status.SetText("No archived message matches every word.")
	default:
		cycles := 0
		for _, n := range b.perCycle {
			if n > 0 {
				cycles++
			}
		}
		b.status.SetText(fmt.Sprintf("%s in %s", text.Plural(b.total, "matching message"), text.Plural(cycles, "cycle")))
	}
}

// Archive loads the shown session's archives off the UI goroutine and
// opens the browser.
func (vs *Views) Archive() {
	s := vs.h.Current()
	if s == nil || s.Ops() == nil {
		return
	}
	read := s.Ops().Archives
	vs.h.Work(func() func() {
		archives, err := read()
		return func() {
			if !s.Shown() {
				return
			}
			if err != nil {
				vs.h.Error("Could not read the archive: " + err.Error())
				return
			}
			openArchive(archives, vs.h.Window)
		}
	})
}

// openArchive shows the archive browser over archives, sized to win; it
// returns the browser and its dialog.
func openArchive(archives []cycle.Archive, win fyne.Window) (*archiveBrowser, dialog.Dialog) {
	b := newArchiveBrowser(archives, win)
	d := dialog.NewCustom("Archive", "Close", b.content, win)
	size := win.Canvas().Size()
	d.Resize(fyne.NewSize(min(940, size.Width-40), min(620, size.Height-40)))
	d.Show()
	return b, d
}
