package extensions

import (
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// Hooks is the Hooks dialog: every hook sessions of the shown workspace
// run (the user's, then the workspace's), with its last run in the shown
// session.
type Hooks struct {
	widget.BaseWidget

	h      Host
	list   *fyne.Container
	head   *widget.Label
	status *widget.Label
	body   fyne.CanvasObject
}

// CreateRenderer implements fyne.Widget.
func (v *Hooks) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.body) }

// ShowHooks opens the Hooks dialog over what list reads off the UI
// goroutine (the hooks with the shown session's last runs); its button
// for an untrusted workspace file calls review, when not nil.
func ShowHooks(h Host, list func() (workbench.HooksListing, error), review func(hooks.WorkspaceFile)) *Hooks {
	v := &Hooks{h: h, list: container.NewVBox()}
	v.head = &widget.Label{Wrapping: fyne.TextWrapWord}
	v.status = &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance}
	v.body = container.NewBorder(v.head, v.status, nil, nil, container.NewVScroll(v.list))
	v.ExtendBaseWidget(v)
	size := h.Window.Canvas().Size()
	d := dialog.NewCustom("Hooks", "Close", v, h.Window)
	d.Resize(fyne.NewSize(min(900, size.Width-40), min(600, size.Height-40)))
	h.Work(func() func() {
		listing, err := list()
		return func() { v.show(listing, err, review) }
	})
	d.Show()
	return v
}

// show draws a listing; review is what its button for an untrusted
// workspace file does (nil: nothing, no session is shown).
func (v *Hooks) show(l workbench.HooksListing, err error, review func(hooks.WorkspaceFile)) {
	v.head.SetText("Command hooks from " + l.UserPath + " (yours) and the workspace's .tally/hooks.json (only once trusted), " +
		"in the shape Claude Code's settings use. They run sandboxed like the agent's commands, with the event as JSON on their input. " +
		"Changes apply to sessions opened from now on.")
	v.list.Objects = nil
	if len(l.Hooks) == 0 {
		v.list.Add(widget.NewLabel("No hook is configured. See docs/hooks.md for an example hooks.json."))
	}
	for _, h := range l.Hooks {
		v.list.Add(v.row(h))
	}
	if l.Workspace.NeedsTrust {
		wf := l.Workspace
		v.list.Add(&widget.Button{Text: "Review the workspace's hooks…", OnTapped: func() {
			if review != nil {
				review(wf)
			}
		}})
	}
	v.list.Refresh()
	var notes []string
	if err != nil {
		notes = append(notes, "Could not read the hooks: "+err.Error())
	}
	notes = append(notes, l.Notes...)
	v.status.Importance = widget.LowImportance
	if len(notes) > 0 {
		v.status.Importance = widget.WarningImportance
	}
	v.status.SetText(strings.Join(notes, "\n"))
}

// row is one hook in the dialog: where it comes from, its event and
// matcher, its command and its last run.
func (v *Hooks) row(h workbench.HookEntry) fyne.CanvasObject {
	source := "yours"
	if h.Source == hooks.SourceWorkspace {
		source = "workspace, not trusted"
		if h.Trusted {
			source = "workspace, trusted"
		}
	}
	title := &widget.Label{Text: hookTitle(h.Hook) + "  (" + source + ")", TextStyle: fyne.TextStyle{Bold: true}}
	cmd := &widget.Label{Text: text.OneLine(h.Command, 300) + "   · at most " + h.Limit().String(), Wrapping: fyne.TextWrapWord}
	last := &widget.Label{Text: lastRunText(h.Last), Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance}
	if h.Last != nil && (h.Last.Outcome.Blocked() || h.Last.Outcome.Error != "") {
		last.Importance = widget.DangerImportance
	}
	return container.NewVBox(title, cmd, last, widget.NewSeparator())
}

// lastRunText says how a hook's last run went: when, how long, its exit
// and what it answered.
func lastRunText(r *hooks.Run) string {
	if r == nil {
		return "not run in this session yet"
	}
	s := "last run " + r.Start.Format("15:04:05")
	if r.Subject != "" {
		s += " for " + r.Subject
	}
	s += " (" + r.Duration.Round(time.Millisecond).String() + "): " + r.Short(200)
	o := r.Outcome
	switch {
	case o.Stop:
		s += " — ended the turn"
	case o.Permission == hooks.Deny || (o.Block && r.Event == hooks.PreToolUse):
		s += " — refused the call"
	case o.Block:
		s += " — blocked"
	case len(o.UpdatedInput) > 0:
		s += " — changed the arguments"
	}
	return s
}
