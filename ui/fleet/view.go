package fleet

import (
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/internal/text"
)

// Host is what the view needs of the window, as callbacks: the view never
// sees the window's own type.
type Host struct {
	// Window is the window the view's dialogs open over.
	Window fyne.Window
	// Work runs work off the UI goroutine and then applies what it
	// returns on it (the Bridge's Work).
	Work func(work func() (apply func()))
	// Read reads a session's facts through the front door (ReadFacts);
	// it runs inside Work.
	Read func(id string, sess *agent.Session) Facts
	// Show shows the view's dialog as the window's one view, in place of
	// the sheet, search or settings shown.
	Show func(d dialog.Dialog)
	// Open shows session id in the window.
	Open func(id string)
	// Waiting says what a session whose turn runs waits for the user on
	// ("needs approval", "needs an answer"), "" for nothing.
	Waiting func(id string) string
	// Prices prices the rows: the settings' prices when asked.
	Prices ledger.PriceBook
	// MaxSteps is a turn's step limit, shown as "step 3/50".
	MaxSteps int
}

// View is the fleet: its entries, the toolbar's button with its badge,
// and the dialog that lists them while it is shown.
type View struct {
	host Host
	byID map[string]*Entry
	list []*Entry // sorted as listed

	// Button opens the view: an icon, as its neighbours in the toolbar,
	// that says how many sessions need the user, in the warning colour,
	// while any does.
	Button *widget.Button

	dlg     dialog.Dialog // the dialog shown, nil when closed
	box     *fyne.Container
	rows    map[string]*row
	summary *widget.Label
	empty   *widget.Label
	clear   *widget.Button
}

// New returns an empty fleet view over h.
func New(h Host) *View {
	v := &View{host: h, byID: map[string]*Entry{}, rows: map[string]*row{}}
	v.Button = &widget.Button{Icon: theme.GridIcon(), Importance: widget.LowImportance, OnTapped: v.Show}
	return v
}

// Event takes one engine event of session id (shown or in the
// background) into its entry. A session enters the fleet when a turn of
// it starts; its title, branch and ledger are then read through the
// front door. A nil view ignores it.
func (v *View) Event(id string, sess *agent.Session, e agent.Event) {
	if v == nil {
		return
	}
	en := v.byID[id]
	if en == nil {
		if e.Kind != agent.EventTurnStart {
			return
		}
		en = &Entry{ID: id, Title: id, MaxSteps: v.host.MaxSteps}
		v.byID[id] = en
		v.list = append(v.list, en)
	}
	if !en.apply(e) {
		return
	}
	if e.Kind == agent.EventTurnStart {
		if w := v.waiting(id); w != "" {
			en.State, en.Waits = Waiting, w
		}
		v.read(en, sess)
	}
	v.changed()
}

// Refresh asks the host again which busy sessions wait for the user, as
// the session list's badges do, and redraws what changed. A nil view
// ignores it.
func (v *View) Refresh() {
	if v == nil {
		return
	}
	for _, en := range v.list {
		if !en.busy() {
			continue
		}
		en.State, en.Waits = Running, v.waiting(en.ID)
		if en.Waits != "" {
			en.State = Waiting
		}
	}
	v.changed()
}

// Ended takes the end of a turn of session id into its entry (reason is
// the engine's end reason, err the turn's error) and reads its ledger
// again, which holds requests that sent no event (summaries,
// sub-agents). It returns the prompt queued for the session and true when
// it is to be sent now: when the turn ended in any way but Stop. After a
// Stop the prompt stays queued (held), to go when the next turn ends or
// to be cancelled.
func (v *View) Ended(id string, sess *agent.Session, reason string, err error) (prompt string, send bool) {
	en := v.entry(id)
	if en == nil {
		return "", false
	}
	en.ended(reason, err)
	v.read(en, sess)
	if en.Queued != "" && en.State != Stopped {
		prompt, en.Queued = en.Queued, ""
		en.State, en.Step, en.Err = Running, 1, ""
		send = true
	}
	v.changed()
	return prompt, send
}

// Queue queues prompt for session id, replacing a prompt queued before;
// it is sent when the session's turn ends (see Ended). It reports false
// for a session not in the fleet or a blank prompt.
func (v *View) Queue(id, prompt string) bool {
	en := v.entry(id)
	if en == nil || strings.TrimSpace(prompt) == "" {
		return false
	}
	en.Queued = strings.TrimSpace(prompt)
	v.changed()
	return true
}

// Cancel drops the prompt queued for session id.
func (v *View) Cancel(id string) {
	if en := v.entry(id); en != nil && en.Queued != "" {
		en.Queued = ""
		v.changed()
	}
}

// Forget takes session id out of the fleet (it was deleted).
func (v *View) Forget(id string) {
	if v == nil || v.byID[id] == nil {
		return
	}
	delete(v.byID, id)
	for i, en := range v.list {
		if en.ID == id {
			v.list = append(v.list[:i], v.list[i+1:]...)
			break
		}
	}
	delete(v.rows, id)
	v.changed()
}

// Entries returns copies of the listed entries, in the view's order.
func (v *View) Entries() []Entry {
	sortEntries(v.list)
	out := make([]Entry, len(v.list))
	for i, en := range v.list {
		out[i] = *en
	}
	return out
}

// entry is session id's entry, nil when it is not listed (or v is nil).
func (v *View) entry(id string) *Entry {
	if v == nil {
		return nil
	}
	return v.byID[id]
}

// waiting asks the host what session id waits on.
func (v *View) waiting(id string) string {
	if v.host.Waiting == nil {
		return ""
	}
	return v.host.Waiting(id)
}

// read reads en's facts off the UI goroutine and takes them in.
func (v *View) read(en *Entry, sess *agent.Session) {
	if v.host.Read == nil || v.host.Work == nil {
		return
	}
	read, id := v.host.Read, en.ID
	v.host.Work(func() func() {
		f := read(id, sess)
		return func() {
			if v.byID[id] == en {
				en.take(f)
				v.changed()
			}
		}
	})
}

// counts are how many listed sessions need the user and how many run.
func (v *View) counts() (waiting, running, ended int) {
	for _, en := range v.list {
		switch en.State {
		case Waiting:
			waiting++
		case Running:
			running++
		default:
			ended++
		}
	}
	return
}

// changed redraws the button's badge and, while the dialog is shown, the
// rows.
func (v *View) changed() {
	label, imp := "", widget.LowImportance
	switch waiting, _, _ := v.counts(); {
	case waiting == 1:
		label, imp = "1 needs you", widget.WarningImportance
	case waiting > 1:
		label, imp = itoa(waiting)+" need you", widget.WarningImportance
	}
	if v.Button.Text != label || v.Button.Importance != imp {
		v.Button.Text, v.Button.Importance = label, imp
		v.Button.Refresh()
	}
	if v.dlg != nil {
		v.redraw()
	}
}

// itoa is n in decimal.
func itoa(n int) string { return text.Thousands(n) }

// homeDir is the user's home folder, "" when unknown.
func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
