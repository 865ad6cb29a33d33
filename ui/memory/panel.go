// Package memory is the window's Memory panel: the memory entries the
// model proposed, waiting for the user to accept, edit or reject each
// one, and those accepted for the shown session's workspace, each with
// its tokens in the prefix of the sessions it will enter. Nothing is
// remembered until the user accepts it here (or with `tally memory`).
//
// It never sees the window: it gets a Host of callbacks and the front
// door's memory (Store). Reading and changing the entries and asking the
// model run off the UI goroutine through Host.Work; widgets are touched
// only on the UI goroutine, and the package never starts a goroutine or
// calls fyne.Do itself.
package memory

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/memory"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Store is the front door's memory (a *workbench.Workbench), an
// interface so the panel's tests can play it.
type Store interface {
	PendingMemory() ([]memory.Entry, error)
	AcceptedMemory(workspace string) []memory.Entry
	AcceptMemory(id int) (memory.Entry, error)
	EditMemory(id int, text string, kind memory.Kind) (memory.Entry, error)
	RejectMemory(id int) error
	ProposeMemory(ctx context.Context, sess *agent.Session) (memory.Proposal, error)
	MemoryDue(sess *agent.Session) bool
}

// Over is wb's memory as the panel's Store; nil when wb is (the data
// could not be opened), so the panel reads nothing.
func Over(wb *workbench.Workbench) Store {
	if wb == nil {
		return nil
	}
	return wb
}

// Host is what the panel gets from the window; its functions are called
// on the UI goroutine.
type Host struct {
	// Window holds the panel's dialog.
	Window fyne.Window
	// Work runs work off the UI goroutine, then the function it returns
	// on the UI goroutine.
	Work func(work func() (apply func()))
	// Memory is the front door's memory.
	Memory Store
	// Session is the session shown and its workspace (nil and "" for
	// none): the one "Propose from this session" asks, and whose
	// workspace's accepted entries are listed.
	Session func() (*agent.Session, string)
	// Show shows the panel's dialog as the window's one view; nil shows
	// it plainly.
	Show func(d dialog.Dialog)
}

// Panel is the Memory panel: its toolbar button, which counts the
// entries waiting, and its dialog while shown.
type Panel struct {
	host Host
	// Button opens the panel; its text is the number of entries waiting
	// for review, "" when none.
	Button *widget.Button

	pending  []memory.Entry
	accepted []memory.Entry
	space    string // the workspace accepted was read for
	// costs are each pending and accepted entry's tokens (by kind and
	// text) and total the accepted ones' with the heading, counted off
	// the UI goroutine when the entries are read.
	costs map[string]int
	total int

	dlg      dialog.Dialog
	propose  *widget.Button
	status   *widget.Label
	pendBox  *fyne.Container
	acceptBx *fyne.Container
	acceptHd *widget.Label
	editing  int // the ID whose row shows the editor, 0 for none
}

// New returns the panel over h and reads what waits, for the button.
func New(h Host) *Panel {
	p := &Panel{host: h}
	p.Button = &widget.Button{Icon: theme.StorageIcon(), Importance: widget.LowImportance, OnTapped: p.Show}
	p.Refresh()
	return p
}

// Refresh reads the entries again (off the UI goroutine) and redraws the
// button and, when shown, the dialog.
func (p *Panel) Refresh() {
	if p.host.Memory == nil || p.host.Work == nil {
		return
	}
	_, ws := p.session()
	store := p.host.Memory
	p.host.Work(func() func() {
		pending, err := store.PendingMemory()
		accepted := store.AcceptedMemory(ws)
		costs, total := map[string]int{}, 0
		for _, e := range pending {
			costs[costKey(e)] = workbench.MemoryCost(e)
		}
		for _, e := range accepted {
			costs[costKey(e)] = workbench.MemoryCost(e)
			total += costs[costKey(e)]
		}
		if len(accepted) > 0 {
			total += workbench.MemoryHeadCost()
		}
		return func() {
			p.pending, p.accepted, p.space = pending, accepted, ws
			p.costs, p.total = costs, total
			if err != nil {
				p.say(err.Error(), true)
			}
			p.redraw()
		}
	})
}

func (p *Panel) session() (*agent.Session, string) {
	if p.host.Session == nil {
		return nil, ""
	}
	return p.host.Session()
}

// Show opens the panel's dialog over the window.
func (p *Panel) Show() {
	intro := &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance,
		Text: "Entries the model proposed wait here until you accept, edit or reject them. Accepted ones are kept in the workspace's .tally/memory.md (preferences in your own memory.md) and enter the prompt of sessions started from now on, never of one already running."}
	p.propose = &widget.Button{Text: "Propose from this session", Icon: theme.ContentAddIcon(), OnTapped: p.proposeNow}
	p.status = &widget.Label{Wrapping: fyne.TextWrapWord}
	p.status.Hide()
	p.pendBox, p.acceptBx = container.NewVBox(), container.NewVBox()
	p.acceptHd = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Wrapping: fyne.TextWrapWord}
	p.editing = 0
	head := container.NewVBox(intro, container.NewHBox(p.propose), p.status, widget.NewSeparator())
	body := container.NewVBox(&widget.Label{Text: "Waiting for review", TextStyle: fyne.TextStyle{Bold: true}}, p.pendBox,
		widget.NewSeparator(), p.acceptHd, p.acceptBx)
	d := dialog.NewCustom("Memory", "Close", container.NewBorder(head, nil, nil, nil, container.NewVScroll(body)), p.host.Window)
	d.SetOnClosed(func() {
		if p.dlg == d {
			p.dlg = nil
		}
	})
	p.dlg = d
	sz := p.host.Window.Canvas().Size()
	d.Resize(fyne.NewSize(min(860, sz.Width-40), min(640, sz.Height-40)))
	p.redraw()
	if p.host.Show != nil {
		p.host.Show(d)
	} else {
		d.Show()
	}
	p.Refresh()
}

// redraw brings the button and the shown dialog up to date.
func (p *Panel) redraw() {
	p.Button.SetText("")
	if n := len(p.pending); n > 0 {
		p.Button.SetText(strconv.Itoa(n))
	}
	if p.dlg == nil {
		return
	}
	sess, _ := p.session()
	if sess == nil {
		p.propose.Disable()
	} else {
		p.propose.Enable()
	}
	rows := make([]fyne.CanvasObject, 0, len(p.pending))
	for _, e := range p.pending {
		rows = append(rows, p.pendingRow(e))
	}
	if len(rows) == 0 {
		rows = append(rows, &widget.Label{Text: "Nothing waits. Propose from a session to have its model suggest what to remember.", Importance: widget.LowImportance, Wrapping: fyne.TextWrapWord})
	}
	p.pendBox.Objects = rows
	p.pendBox.Refresh()
	rows = rows[:0:0]
	for _, e := range p.accepted {
		rows = append(rows, container.NewBorder(nil, nil, nil, tokens(p.costs[costKey(e)], ""), line(e)))
	}
	where := "your own memory.md"
	if p.space != "" {
		where = p.space
	}
	p.acceptHd.SetText(fmt.Sprintf("Accepted for %s: %s in the prefix of each new session", where, text.Plural(p.total, "token")))
	if len(rows) == 0 {
		rows = append(rows, &widget.Label{Text: "None yet.", Importance: widget.LowImportance})
	}
	p.acceptBx.Objects = rows
	p.acceptBx.Refresh()
}

// costKey names an entry among the panel's costs: its kind and text,
// which decide its line in the prefix.
func costKey(e memory.Entry) string { return string(e.Kind) + "\x00" + e.Text }

// line is an entry's kind and text.
func line(e memory.Entry) *widget.Label {
	return &widget.Label{Text: "[" + string(e.Kind) + "] " + e.Text, Wrapping: fyne.TextWrapWord}
}

// tokens is an entry's cost as a caption: "+17 tokens" for one waiting.
func tokens(n int, sign string) *widget.Label {
	return &widget.Label{Text: sign + text.Plural(n, "token"), SizeName: theme.SizeNameCaptionText, Importance: widget.LowImportance}
}

// pendingRow is one waiting entry: its text, cost and source, and its
// Accept, Edit and Reject buttons; or, while it is edited, the editor.
func (p *Panel) pendingRow(e memory.Entry) fyne.CanvasObject {
	where, err := workbench.MemoryFile(e)
	if err != nil {
		where = err.Error()
	}
	detail := &widget.Label{Text: "from " + e.Source.String() + " · kept in " + where, SizeName: theme.SizeNameCaptionText,
		Importance: widget.LowImportance, Truncation: fyne.TextTruncateEllipsis}
	id := e.ID
	if p.editing == id {
		entry := tw.NewEscMultiLineEntry()
		entry.Wrapping = fyne.TextWrapWord
		entry.SetText(e.Text)
		kind := widget.NewSelect(kindNames(), nil)
		kind.SetSelected(string(e.Kind))
		save := &widget.Button{Text: "Save", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance, OnTapped: func() {
			p.change(func(s Store) error {
				_, err := s.EditMemory(id, entry.Text, memory.Kind(kind.Selected))
				return err
			}, "")
		}}
		cancel := &widget.Button{Text: "Cancel", Icon: theme.CancelIcon(), OnTapped: func() { p.editing = 0; p.redraw() }}
		return container.NewVBox(entry, container.NewHBox(kind, save, cancel), detail, widget.NewSeparator())
	}
	accept := &widget.Button{Text: "Accept", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance, OnTapped: func() {
		p.change(func(s Store) error { _, err := s.AcceptMemory(id); return err }, "Remembered; sessions started from now on have it in their prompt.")
	}}
	edit := &widget.Button{Text: "Edit", Icon: theme.DocumentCreateIcon(), OnTapped: func() { p.editing = id; p.redraw() }}
	reject := &widget.Button{Text: "Reject", Icon: theme.DeleteIcon(), Importance: widget.DangerImportance, OnTapped: func() {
		p.change(func(s Store) error { return s.RejectMemory(id) }, "Rejected; it is remembered nowhere.")
	}}
	top := container.NewBorder(nil, nil, nil, tokens(p.costs[costKey(e)], "+"), line(e))
	return container.NewVBox(top, detail, container.NewHBox(accept, edit, reject), widget.NewSeparator())
}

// kindNames lists the kinds for the editor's choice.
func kindNames() []string {
	var out []string
	for _, k := range workbench.MemoryKinds() {
		out = append(out, string(k))
	}
	return out
}

// change runs fn on the store off the UI goroutine, then says done (or
// the error) and reads the entries again.
func (p *Panel) change(fn func(Store) error, done string) {
	store := p.host.Memory
	p.host.Work(func() func() {
		err := fn(store)
		return func() {
			if err != nil {
				p.say(err.Error(), true)
				return
			}
			p.editing = 0
			p.say(done, false)
			p.Refresh()
		}
	})
}

// leaveTimeout bounds the proposal made when the user leaves a session.
const leaveTimeout = 2 * time.Minute

// Leave is how the window lets go of sess, a session the user left with
// no turn running: when memory is due from it (Store.MemoryDue: enough
// new turns since the last proposal) its model proposes entries first,
// off the UI goroutine, and they wait in the panel like any others; then
// closeSession closes it. A failed proposal only leaves the count as it
// was. A nil session, or a nil panel, is only closed.
func (p *Panel) Leave(sess *agent.Session, closeSession func(*agent.Session)) {
	if p == nil {
		closeSession(sess)
		return
	}
	store := p.host.Memory
	if sess == nil || store == nil || p.host.Work == nil {
		closeSession(sess)
		return
	}
	p.host.Work(func() func() {
		if store.MemoryDue(sess) {
			ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
			_, _ = store.ProposeMemory(ctx, sess)
			cancel()
		}
		return func() { closeSession(sess); p.Refresh() }
	})
}

// proposeNow asks the shown session's model for entries.
func (p *Panel) proposeNow() {
	sess, _ := p.session()
	if sess == nil {
		return
	}
	p.propose.Disable()
	p.say("Asking the model what is worth remembering…", false)
	store := p.host.Memory
	p.host.Work(func() func() {
		prop, err := store.ProposeMemory(context.Background(), sess)
		return func() {
			p.propose.Enable()
			switch {
			case err != nil:
				p.say(err.Error(), true)
			case len(prop.Entries) == 0:
				p.say(joinNotes("The model proposed nothing new to remember.", prop.Notes), false)
			default:
				p.say(joinNotes(fmt.Sprintf("The model proposed %d; review them below.", len(prop.Entries)), prop.Notes), false)
			}
			p.Refresh()
		}
	})
}

// joinNotes is msg with the proposal's notes, one a line.
func joinNotes(msg string, notes []string) string {
	for _, n := range notes {
		msg += "\nNote: " + n
	}
	return msg
}

// say shows msg at the top of the dialog ("" hides it), as an error
// when bad.
func (p *Panel) say(msg string, bad bool) {
	if p.status == nil {
		return
	}
	p.status.Importance = widget.MediumImportance
	if bad {
		p.status.Importance = widget.DangerImportance
	}
	p.status.SetText(msg)
	tw.ShowIf(p.status, msg != "")
}
