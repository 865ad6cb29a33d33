// Package fork is the window's "Fork…" on each of the user's messages: a
// dialog that starts a new session whose conversation is the shown one's
// up to the end of that message's turn, byte for byte (so the model's
// cache still serves it), sharing the folder with no file touched or in a
// git worktree of its own holding the files as they were at that turn.
// The shown session is never changed.
//
// It never sees the window: it gets a Host of callbacks. The engine is
// called only off the UI goroutine, through Host.Work; widgets are touched
// only on the UI goroutine, and the package never starts a goroutine or
// calls fyne.Do itself.
package fork

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/rewind"
)

// Host is what the dialog gets from the window: the rewind views' host
// (the window, Work, the banner and the shown session), the workbench's
// ForkSession, and Opened, which lists and shows a new session.
type Host struct {
	rewind.Host
	// Fork is workbench.Workbench.ForkSession, called off the UI goroutine.
	Fork func(ctx context.Context, parent string, o workbench.ForkOptions) (workbench.Forked, error)
	// Opened lists and shows the new session id, on the UI goroutine.
	Opened func(id string)
}

// Views is the Fork dialog of a window.
type Views struct {
	h Host
	// Dialog is the open dialog's content, for tests; nil when none was
	// opened.
	Dialog *Dialog
}

// New returns the views.
func New(h Host) *Views { return &Views{h: h} }

// Dialog is the content of the Fork dialog.
type Dialog struct {
	Turn   int                // the turn the fork ends with
	Where  *widget.RadioGroup // the folder's choice: Shared or InWorktree
	Title  *widget.Entry      // the fork's title; empty: the parent's with "(fork)"
	Fork   *widget.Button     // forks and opens the fork
	Cancel *widget.Button     // closes the dialog, nothing made
	Text   *widget.Label      // what a fork is and keeps
	dlg    dialog.Dialog
	parent string
}

// The choices of Dialog.Where.
const (
	Shared     = "Share this session's folder: no file is touched"
	InWorktree = "In a git worktree of its own, with the files as they were at the end of this turn"
)

// Fork opens the Fork dialog for the turn of the user row it.
func (v *Views) Fork(it *chat.Item) {
	s := v.h.Current()
	if s == nil || s.Engine() == nil || it == nil {
		return
	}
	snap := s.Engine().Snapshot()
	n, ok := rewind.TurnOf(snap.Turns(), rewind.Row{Sent: it.Sent, Sha: it.Sha, LogIndex: it.LogIndex})
	if !ok {
		v.h.Error("Cannot fork: this message has no turn number (it was sent by an older Tally).")
		return
	}
	if s.Running() && n == snap.Turns()[len(snap.Turns())-1].N {
		v.h.Info("This turn is still running; fork it when it has finished (or press Stop), or fork an earlier one.")
		return
	}
	v.Dialog = v.show(snap.Meta.ID, snap.Meta.Title, n)
}

func (v *Views) show(parent, title string, n int) *Dialog {
	d := &Dialog{Turn: n, parent: parent}
	d.Text = &widget.Label{Wrapping: fyne.TextWrapWord, Text: fmt.Sprintf(
		"A new session whose conversation is this one up to the end of turn %d, its answer included, byte for byte, "+
			"so the model's cache still serves it. This session is not changed; the new one lists where it comes from.", n)}
	d.Where = widget.NewRadioGroup([]string{Shared, InWorktree}, nil)
	d.Where.SetSelected(Shared)
	d.Title = widget.NewEntry()
	d.Title.SetPlaceHolder(title + " (fork)")
	d.Fork = &widget.Button{Text: "Fork", Importance: widget.HighImportance, OnTapped: func() { v.start(d) }}
	d.Cancel = &widget.Button{Text: "Cancel", OnTapped: func() { d.dlg.Hide() }}
	body := container.NewVBox(d.Text, d.Where, widget.NewForm(widget.NewFormItem("Title", d.Title)),
		container.NewHBox(layout.NewSpacer(), d.Cancel, d.Fork))
	d.dlg = dialog.NewCustomWithoutButtons(fmt.Sprintf("Fork from turn %d", n), body, v.h.Window)
	d.dlg.Resize(fyne.NewSize(560, 0))
	d.dlg.Show()
	return d
}

// start forks off the UI goroutine, then shows the new session.
func (v *Views) start(d *Dialog) {
	d.Fork.Disable()
	o := workbench.ForkOptions{Turn: d.Turn, Title: strings.TrimSpace(d.Title.Text), Worktree: d.Where.Selected == InWorktree}
	v.h.Work(func() func() {
		f, err := v.h.Fork(context.Background(), d.parent, o)
		return func() {
			d.dlg.Hide()
			if f.Session.ID == "" {
				v.h.Error("Cannot fork: " + err.Error())
				return
			}
			v.h.Opened(f.Session.ID)
			// Opening the fork clears the banner: the outcome is a dialog.
			msg := fmt.Sprintf("Forked turn %d into a new session in the same folder; no file was touched.", f.Turn)
			if o.Worktree {
				msg = fmt.Sprintf("Forked turn %d into a git worktree of its own, %s (branch %s), holding the %d files this session had changed as they were then.",
					f.Turn, f.Tree.Path, f.Tree.Branch, len(f.Files.Restored))
				for _, s := range f.Files.Skipped {
					msg += "\nNot copied: " + s
				}
			}
			if err != nil {
				msg += "\n" + err.Error()
			}
			info := dialog.NewInformation("Forked", msg, v.h.Window)
			info.Resize(fyne.NewSize(520, 0))
			info.Show()
		}
	})
}
