package fleet

import (
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The dialog: a line that counts the sessions by state, then one row per
// session, what needs the user first. A row is four short lines, each cut
// with "…" rather than widen the dialog: the state, the title and the
// cost; the workspace, branch and context level; the last line, with a
// button to queue a prompt while a turn runs; the queued prompt, if any.

// Dialog sizes: at most this large, and this far inside the window.
const (
	maxWidth, maxHeight = 960, 640
	inset               = 40
	stateWidth          = 190 // room for "● running · step 12/50"
)

// Show opens the fleet's dialog over the window, listing every entry.
func (v *View) Show() {
	if v.host.Window.Canvas().Overlays().Top() != nil {
		return // over another dialog, an opened session would leave that dialog on top
	}
	v.summary = &widget.Label{Truncation: fyne.TextTruncateEllipsis}
	v.empty = &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance,
		Text: "No session has run a turn since Tally started. Each session whose turn runs, waits for you or has ended is listed here; several can run at once."}
	v.clear = &widget.Button{Text: "Clear ended", Icon: theme.ContentClearIcon(), Importance: widget.LowImportance, OnTapped: v.clearEnded}
	v.box = container.NewVBox()
	v.rows = map[string]*row{}
	head := container.NewVBox(container.NewBorder(nil, nil, nil, v.clear, v.summary), widget.NewSeparator())
	content := container.NewBorder(head, nil, nil, nil, container.NewStack(container.NewVScroll(v.box), container.NewVBox(v.empty)))
	d := dialog.NewCustom("Fleet", "Close", content, v.host.Window)
	v.dlg = d
	v.redraw()
	sz := v.host.Window.Canvas().Size()
	d.Resize(fyne.NewSize(min(maxWidth, sz.Width-inset), min(maxHeight, sz.Height-inset)))
	if v.host.Show != nil {
		v.host.Show(d)
	} else {
		d.Show()
	}
}

// redraw brings the dialog's rows and counts up to date.
func (v *View) redraw() {
	sortEntries(v.list)
	objs := make([]fyne.CanvasObject, 0, len(v.list))
	for _, en := range v.list {
		r := v.rows[en.ID]
		if r == nil {
			r = newRow(v, en.ID)
			v.rows[en.ID] = r
		}
		r.update(en, v.host.Prices)
		objs = append(objs, r)
	}
	if !same(v.box.Objects, objs) {
		v.box.Objects = objs
		v.box.Refresh()
	}
	waiting, running, ended := v.counts()
	var parts []string
	if waiting > 0 {
		parts = append(parts, itoa(waiting)+" need you")
		if waiting == 1 {
			parts[0] = "1 needs you"
		}
	}
	if running > 0 {
		parts = append(parts, itoa(running)+" running")
	}
	if ended > 0 {
		parts = append(parts, itoa(ended)+" ended")
	}
	sum := text.Plural(len(v.list), "session")
	if len(parts) > 0 {
		sum += ": " + strings.Join(parts, " · ") + " — click one to open it"
	}
	v.summary.SetText(sum)
	tw.ShowIf(v.empty, len(v.list) == 0)
	if ended > 0 {
		v.clear.Enable()
	} else {
		v.clear.Disable()
	}
}

// same reports whether two object lists hold the same objects in order.
func same(a, b []fyne.CanvasObject) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// clearEnded takes the sessions whose turn ended (and have nothing
// queued) out of the fleet.
func (v *View) clearEnded() {
	for _, en := range append([]*Entry(nil), v.list...) {
		if !en.busy() && en.Queued == "" {
			v.Forget(en.ID)
		}
	}
}

// open closes the dialog and shows session id.
func (v *View) open(id string) {
	if v.dlg != nil {
		v.dlg.Hide()
		v.dlg = nil
	}
	if v.host.Open != nil {
		v.host.Open(id)
	}
}

// askQueue asks for a prompt to queue for session id.
func (v *View) askQueue(id string) {
	en := v.entry(id)
	if en == nil {
		return
	}
	e := tw.NewEscMultiLineEntry()
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(4)
	e.SetText(en.Queued)
	e.SetPlaceHolder("Sent to this session when its turn ends")
	note := &widget.Label{Text: "For " + en.Title + ". It is sent as your next message when the running turn ends; until then you can cancel it.",
		Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance}
	d := dialog.NewCustomConfirm("Queue a prompt", "Queue", "Cancel", container.NewBorder(note, nil, nil, nil, e), func(ok bool) {
		if ok {
			v.Queue(id, e.Text)
		}
	}, v.host.Window)
	w := v.host.Window.Canvas().Size().Width
	d.Resize(fyne.NewSize(min(600, w-inset), d.MinSize().Height+40))
	d.Show()
	v.host.Window.Canvas().Focus(e)
}

// row is one session in the dialog; a tap anywhere on it but its buttons
// opens the session.
type row struct {
	widget.BaseWidget
	v  *View
	id string

	state, title, cost, detail, last, queued *widget.Label
	open, queue, cancel                      *widget.Button
	queueLine                                *fyne.Container
	content                                  fyne.CanvasObject
}

func newRow(v *View, id string) *row {
	r := &row{v: v, id: id}
	r.state = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
	r.title = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis}
	r.cost = &widget.Label{}
	r.detail = &widget.Label{Truncation: fyne.TextTruncateEllipsis, SizeName: theme.SizeNameCaptionText}
	r.last = &widget.Label{Truncation: fyne.TextTruncateEllipsis, Importance: widget.LowImportance}
	r.queued = &widget.Label{Truncation: fyne.TextTruncateEllipsis, TextStyle: fyne.TextStyle{Italic: true}}
	r.open = &widget.Button{Text: "Open", Icon: theme.NavigateNextIcon(), OnTapped: func() { v.open(id) }}
	r.queue = &widget.Button{Text: "Queue a prompt…", Icon: theme.ContentAddIcon(), Importance: widget.LowImportance, OnTapped: func() { v.askQueue(id) }}
	r.cancel = &widget.Button{Text: "Cancel", Icon: theme.CancelIcon(), Importance: widget.LowImportance, OnTapped: func() { v.Cancel(id) }}
	col := canvas.NewRectangle(color.Transparent) // the states' column, so the titles line up
	col.SetMinSize(fyne.NewSize(stateWidth, 0))
	top := container.NewBorder(nil, nil, container.NewStack(col, r.state), container.NewHBox(r.cost, r.open), r.title)
	r.queueLine = container.NewBorder(nil, nil, nil, r.cancel, r.queued)
	r.content = container.NewVBox(top, r.detail, container.NewBorder(nil, nil, nil, r.queue, r.last), r.queueLine, widget.NewSeparator())
	r.ExtendBaseWidget(r)
	return r
}

// CreateRenderer implements fyne.Widget.
func (r *row) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.content) }

// Tapped opens the row's session.
func (r *row) Tapped(*fyne.PointEvent) { r.v.open(r.id) }

// Cursor is the hand: the row is a link.
func (r *row) Cursor() desktop.Cursor { return desktop.PointerCursor }

// update draws en.
func (r *row) update(en *Entry, prices ledger.PriceBook) {
	imp := map[State]widget.Importance{Waiting: widget.WarningImportance, Running: widget.SuccessImportance,
		Failed: widget.DangerImportance, Stopped: widget.MediumImportance, Done: widget.MediumImportance}[en.State]
	if r.state.Importance != imp {
		r.state.Importance = imp
		r.state.Refresh()
	}
	r.state.SetText("● " + en.StateText())
	r.title.SetText(en.Title)
	r.cost.SetText(en.Cost(prices))
	r.detail.SetText(en.Detail())
	r.last.SetText(en.LastText())
	switch {
	case en.Queued != "" && en.busy():
		r.queued.SetText("Queued, sent when the turn ends: " + text.OneLine(en.Queued, 300))
	case en.Queued != "":
		r.queued.SetText("Held, sent when the next turn ends: " + text.OneLine(en.Queued, 300))
	default:
		r.queued.SetText("")
	}
	tw.ShowIf(r.queue, en.busy() && en.Queued == "")
	tw.ShowIf(r.cancel, en.Queued != "")
	tw.ShowIf(r.queueLine, en.Queued != "")
}
