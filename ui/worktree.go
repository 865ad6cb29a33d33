package ui

import (
	"context"
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/worktree"
	"github.com/tally-dev/tally/ui/rewind"
)

// Sessions in git worktrees in the app: New session can make one; the
// Changes view of such a session shows the diff against the commit it
// started from and merges its branch into the repository's checkout;
// deleting it offers to remove the worktree.

// mergeButton is the Changes view's "Merge into …" button: shown once
// the session turns out to work in a worktree of its own.
func (u *UI) mergeButton(live *liveSession) *widget.Button {
	b := &widget.Button{Text: "Merge into the repository…", Icon: theme.MailForwardIcon()}
	b.Hide()
	wb, id := u.wb, live.id
	u.bridge.Work(func() func() {
		t, ok, err := wb.Worktree(id)
		return func() {
			if err != nil || !ok {
				return
			}
			b.SetText("Merge into " + filepath.Base(t.Repo) + "…")
			b.OnTapped = func() { u.reviewMerge(live, t) }
			b.Show()
		}
	})
	return b
}

// reviewMerge shows the session's whole diff against its base and merges
// it on request.
func (u *UI) reviewMerge(live *liveSession, t worktree.Tree) {
	if live.job.running {
		u.banner.ShowInfo("A turn is running; merge when it has finished (or press Stop).")
		return
	}
	wb, id := u.wb, live.id
	u.bridge.Work(func() func() {
		diff, err := wb.WorktreeDiff(context.Background(), id)
		return func() {
			if err != nil {
				u.banner.ShowError("Could not read the worktree's changes: " + err.Error())
				return
			}
			if diff == "" {
				u.banner.ShowInfo("The session changed nothing in its worktree, so there is nothing to merge.")
				return
			}
			// Drawn as the Changes view draws a diff, in colour.
			body := container.NewVScroll(rewind.GitDiffView(diff))
			note := &widget.Label{Wrapping: fyne.TextWrapWord, Text: fmt.Sprintf("What the session changed on %s since %.12s. Merge commits it on that branch and merges it into the branch %s is on.",
				t.Branch, t.Base, t.Repo)}
			var d *dialog.CustomDialog
			merge := &widget.Button{Text: "Merge", Importance: widget.HighImportance, OnTapped: func() {
				d.Hide()
				u.bridge.Work(func() func() {
					err := wb.MergeWorktree(context.Background(), id)
					return func() {
						if err != nil {
							u.banner.ShowError("Could not merge: " + err.Error())
							return
						}
						u.banner.ShowInfo("Merged " + t.Branch + " into " + t.Repo + ".")
					}
				})
			}}
			d = dialog.NewCustomWithoutButtons("Merge "+t.Branch, container.NewBorder(note, nil, nil, nil, body), u.win)
			d.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Cancel", OnTapped: func() { d.Hide() }}, merge})
			d.Resize(fyne.NewSize(min(860, u.win.Canvas().Size().Width-40), min(560, u.win.Canvas().Size().Height-40)))
			u.merging = d
			d.Show()
		}
	})
}

// confirmDeleteInWorktree asks before deleting a session that works in a
// worktree, offering to remove the worktree and its branch too.
func (u *UI) confirmDeleteInWorktree(id, title string, t worktree.Tree) {
	also := widget.NewCheck("Also remove its worktree and the branch "+t.Branch+" (what was not merged is lost)", nil)
	msg := &widget.Label{Wrapping: fyne.TextWrapWord, Text: fmt.Sprintf("Delete %q and all of its messages? This cannot be undone. It works in the worktree %s.", title, t.Path)}
	d := dialog.NewCustomConfirm("Delete session", "Delete", "Cancel", container.NewVBox(msg, also), func(ok bool) {
		if !ok {
			return
		}
		u.deleteSessionAnd(id, also.Checked)
	}, u.win)
	d.SetConfirmImportance(widget.DangerImportance) // it cannot be undone: not the blue default
	d.Resize(fyne.NewSize(min(620, u.win.Canvas().Size().Width-40), 0))
	u.merging = d
	d.Show()
}
