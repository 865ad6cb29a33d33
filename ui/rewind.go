package ui

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Undoing the agent's changes: "Rewind to here…" on each of the user's
// messages (files, conversation, or both, back to the start of that
// turn), and the Changes view (every file the session changed, with its
// diff; revert one file or all). Both ask before overwriting a file that
// was changed outside Tally since the agent wrote it.

// rewindChoice is what the Rewind dialog's buttons restore.
type rewindChoice struct{ files, chat bool }

// rewindView is the content of the Rewind dialog.
type rewindView struct {
	widget.BaseWidget

	plan    agent.RewindPlan
	both    *widget.Button
	files   *widget.Button
	chat    *widget.Button
	cancel  *widget.Button
	content fyne.CanvasObject
	dlg     *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *rewindView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.content) }

// startRewind reads the dry run of a rewind to the turn of user row it, off
// the UI goroutine, and opens the dialog.
func (u *UI) startRewind(it *chat.Item) {
	live := u.live
	if live == nil || live.sess == nil {
		return
	}
	if live.job.running {
		u.banner.ShowInfo("A turn is running; rewind when it has finished (or press Stop).")
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		snap := sess.Snapshot()
		turn, ok := turnOfRow(snap.Turns, it)
		var plan agent.RewindPlan
		err := errors.New("this message has no turn number (it was sent by an older Tally)")
		if ok {
			plan, err = sess.RewindPlan(turn)
		}
		return func() {
			if u.live != live {
				return
			}
			if err != nil {
				u.banner.ShowError("Cannot rewind: " + err.Error())
				return
			}
			u.showRewind(live, plan)
		}
	})
}

// turnOfRow finds the turn of a user row: by the time and body of its
// message, which no rewrite of the log changes (a compaction or a new
// cycle moves the message or archives it), else by its log index.
func turnOfRow(turns []agent.Turn, it *chat.Item) (int, bool) {
	if !it.Sent.IsZero() {
		for _, t := range turns {
			if t.Time.Equal(it.Sent) && t.SHA != "" && strings.HasPrefix(it.Sha, t.SHA) {
				return t.N, true
			}
		}
	}
	return turnOfLogIndex(turns, it.LogIndex)
}

// turnOfLogIndex finds the turn number of the user message at a log index.
func turnOfLogIndex(turns []agent.Turn, i int) (int, bool) {
	for _, t := range turns {
		if t.LogIndex == i && i >= 0 {
			return t.N, true
		}
	}
	return 0, false
}

// showRewind opens the Rewind dialog for a dry run.
func (u *UI) showRewind(live *liveSession, plan agent.RewindPlan) {
	v := &rewindView{plan: plan}
	head := &widget.Label{Wrapping: fyne.TextWrapWord, TextStyle: fyne.TextStyle{Bold: true},
		Text: fmt.Sprintf("Go back to the start of turn %d: “%s”", plan.Turn.N, text.FirstLine(plan.Turn.Text, 80))}
	files := container.NewVBox()
	switch {
	case plan.FilesErr != "":
		files.Add(&widget.Label{Text: "Files cannot be restored: " + plan.FilesErr, Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance})
	case len(plan.Files.Files) == 0:
		files.Add(widget.NewLabel("No file was changed by the agent from this turn on: nothing to restore."))
	}
	for _, f := range plan.Files.Files {
		files.Add(restoreRow(f, len(plan.Files.Files) <= 3))
	}
	if n := len(plan.Unrestorable); n > 0 {
		files.Add(&widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance,
			Text: fmt.Sprintf("Turns %v lost some saved content to the checkpoint size limit (Settings): those files stay as they are.", plan.Unrestorable)})
	}
	msgs := container.NewVBox()
	if plan.ChatErr != "" {
		msgs.Add(&widget.Label{Text: "The conversation cannot be rewound: " + plan.ChatErr, Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance})
	} else {
		msgs.Add(&widget.Label{Wrapping: fyne.TextWrapWord, Text: fmt.Sprintf(
			"%s leave the conversation (they stay in the store and in `tally export`). Your message comes back into the prompt box to edit and send again.",
			text.Plural(len(plan.Superseded), "message"))})
		for _, m := range plan.Superseded {
			msgs.Add(&widget.Label{Text: tw.MessageLine(m), Truncation: fyne.TextTruncateEllipsis})
		}
	}
	tabs := container.NewAppTabs(
		container.NewTabItem(fmt.Sprintf("Files (%d)", len(plan.Files.Files)), container.NewVScroll(files)),
		container.NewTabItem(fmt.Sprintf("Messages (%d)", len(plan.Superseded)), container.NewVScroll(msgs)))
	top := fyne.CanvasObject(head)
	if plan.ChatErr != "" {
		// Said above the tabs: it decides which choices are left.
		top = container.NewVBox(head, &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance,
			Text: "Only the files can be restored: " + plan.ChatErr + "."})
	}
	v.content = container.NewBorder(top, nil, nil, nil, tabs)
	run := func(c rewindChoice) {
		v.dlg.Hide()
		u.runRewind(live, plan, c, false)
	}
	v.both = &widget.Button{Text: "Restore files and conversation", Importance: widget.HighImportance, OnTapped: func() { run(rewindChoice{true, true}) }}
	v.files = &widget.Button{Text: "Files only", OnTapped: func() { run(rewindChoice{files: true}) }}
	v.chat = &widget.Button{Text: "Conversation only", OnTapped: func() { run(rewindChoice{chat: true}) }}
	v.cancel = &widget.Button{Text: "Cancel", Icon: theme.CancelIcon(), OnTapped: func() { v.dlg.Hide() }}
	if plan.FilesErr != "" || len(plan.Files.Files) == 0 {
		v.files.Disable()
	}
	if plan.ChatErr != "" {
		v.chat.Disable()
		v.files.Importance = widget.HighImportance
	}
	if v.files.Disabled() || v.chat.Disabled() {
		v.both.Disable()
	}
	v.ExtendBaseWidget(v)
	v.dlg = dialog.NewCustomWithoutButtons("Rewind", v, u.win)
	v.dlg.SetButtons([]fyne.CanvasObject{v.cancel, v.chat, v.files, v.both})
	v.dlg.Resize(fyne.NewSize(min(860, u.win.Canvas().Size().Width-40), min(600, u.win.Canvas().Size().Height-40)))
	v.dlg.Show()
}

// restoreRow shows one file of a rewind plan: what happens to it, a
// conflict in warning colour, and its diff folded.
func restoreRow(f filehistory.FileRestore, open bool) fyne.CanvasObject {
	text := fmt.Sprintf("%s — %s", f.Path, f.Action)
	if f.Why != "" {
		text += " (" + f.Why + ")"
	}
	lbl := &widget.Label{Text: text, Wrapping: fyne.TextWrapWord}
	if f.Conflict {
		lbl.Text = "⚠ " + text + " — changed outside Tally since the agent wrote it; restoring asks first"
		lbl.Importance = widget.WarningImportance
	}
	d := f.Diff
	acc := widget.NewAccordion(widget.NewAccordionItem("Diff of what restoring does", tw.DiffView(&d, nil, nil)))
	if open {
		acc.Open(0) // a short plan shows its diffs at once
	}
	return container.NewVBox(lbl, acc)
}

// runRewind applies the rewind of plan off the UI goroutine; a conflict
// asks before overwriting, then tries again with force.
func (u *UI) runRewind(live *liveSession, plan agent.RewindPlan, c rewindChoice, force bool) {
	turn := plan.Turn.N
	ctx, ok := u.beginBusy(live, "rewinding…")
	if !ok {
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		res, err := sess.Rewind(ctx, turn, c.files, c.chat, force)
		return func() {
			if !u.endBusy(live) {
				return
			}
			u.setIdle()
			switch {
			case errors.Is(err, workbench.ErrConflict):
				u.confirmOverwrite(err, func() { u.runRewind(live, plan, c, true) })
				return
			case err != nil:
				u.banner.ShowError("Could not rewind: " + err.Error())
				return
			}
			msg := fmt.Sprintf("Rewound to turn %d: %s restored", turn, text.Plural(len(res.Files.Restored), "file"))
			if c.chat {
				msg += fmt.Sprintf(", %s taken out of the conversation", text.Plural(res.Superseded, "message"))
			}
			if len(res.Files.Skipped) > 0 {
				msg += "; not restored: " + strings.Join(res.Files.Skipped, "; ")
			}
			if res.Note != "" {
				msg += ". " + res.Note
			}
			u.banner.ShowInfo(msg + ".")
			if c.chat {
				files := -1
				if c.files {
					files = len(res.Files.Restored)
				}
				if len(plan.Superseded) > 0 {
					u.chat.NoteRewind(plan.Superseded[0], files)
				}
				u.reopen(live, res.Text)
				return
			}
			if u.live == live {
				u.chat.Notice(fmt.Sprintf("Files rewound to the start of turn %d · files restored: %d (the conversation stays as it is)",
					turn, len(res.Files.Restored)), false)
			}
		}
	})
}

// confirmOverwrite asks before overwriting files changed outside Tally.
func (u *UI) confirmOverwrite(err error, yes func()) {
	msg := "Some files were changed outside Tally since the agent last wrote them:\n\n" + err.Error() +
		"\n\nOverwrite them with the saved content? Your outside changes to those files are lost."
	dialog.ShowConfirm("Overwrite changed files?", msg, func(ok bool) {
		if ok {
			yes()
		}
	}, u.win)
}

// reopen shows live again from the engine after its log was rewritten,
// with text in the prompt box.
func (u *UI) reopen(live *liveSession, text string) {
	live.draft = ""
	u.resetPanels()
	u.reload(live, func() {
		if u.live == live && text != "" {
			u.input.prompt.setDraft(text)
		}
	})
}

// changesView is the content of the Changes dialog.
type changesView struct {
	widget.BaseWidget

	changes []filehistory.FileChange
	revert  map[string]*widget.Button
	all     *widget.Button
	diags   *changeDiagnostics // the language servers' errors and warnings (changes_diagnostics.go)
	body    fyne.CanvasObject
	dlg     *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *changesView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.body) }

// showChanges lists every file the session changed, with its diff against
// the session's first checkpoint.
func (u *UI) showChanges() {
	live := u.live
	if live == nil || live.sess == nil {
		return
	}
	readThen(u, live, "read the session's changes", live.sess.Files().Changes,
		func(changes []filehistory.FileChange) { u.openChanges(live, changes) })
}

func (u *UI) openChanges(live *liveSession, changes []filehistory.FileChange) {
	v := &changesView{changes: changes, revert: map[string]*widget.Button{}, diags: newChangeDiagnostics()}
	list := container.NewVBox()
	if len(changes) == 0 {
		list.Add(widget.NewLabel("The agent has not changed any file in this session (or every change was reverted)."))
	}
	for _, c := range changes {
		path := c.Path
		b := &widget.Button{Text: "Revert", Icon: theme.ContentUndoIcon(), OnTapped: func() { u.revertFiles(live, v, path, false) }}
		if !c.Restorable {
			b.Disable()
		}
		v.revert[path] = b
		head := container.NewBorder(nil, nil, nil, container.NewHBox(v.diags.badge(path), b), &widget.Label{Text: path, TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis})
		var body fyne.CanvasObject
		if c.Restorable {
			d := c.Diff
			body = tw.DiffView(&d, nil, nil)
		} else {
			body = &widget.Label{Text: "Not restorable: " + c.Why, Wrapping: fyne.TextWrapWord, Importance: widget.WarningImportance}
		}
		list.Add(container.NewVBox(head, widget.NewAccordion(widget.NewAccordionItem("Diff since the session began", body)), v.diags.list(path)))
	}
	v.all = &widget.Button{Text: "Revert all", Icon: theme.ContentUndoIcon(), Importance: widget.DangerImportance, OnTapped: func() {
		dialog.ShowConfirm("Revert all", fmt.Sprintf("Put %s back as they were when the session began? The conversation stays as it is.",
			text.Plural(len(changes), "file")), func(ok bool) {
			if ok {
				u.revertFiles(live, v, "", false)
			}
		}, u.win)
	}}
	if len(changes) == 0 {
		v.all.Disable()
	}
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance,
		Text: "Every file the agent changed in this session, by its own edits or by commands, against its state when the session began. Files it never touched are never written."}
	v.body = container.NewBorder(note, nil, nil, nil, container.NewVScroll(list))
	v.ExtendBaseWidget(v)
	v.dlg = dialog.NewCustomWithoutButtons("Changes", v, u.win)
	merge := u.mergeButton(live)
	v.dlg.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Close", OnTapped: func() { v.dlg.Hide() }}, merge, v.all})
	v.dlg.Resize(fyne.NewSize(min(860, u.win.Canvas().Size().Width-40), min(600, u.win.Canvas().Size().Height-40)))
	v.dlg.Show()
	u.fetchChangeDiagnostics(live, v)
}

// revertFiles reverts one file (path) or all ("") off the UI goroutine,
// asking before overwriting outside changes, then replaces the Changes
// view v with a fresh one.
func (u *UI) revertFiles(live *liveSession, v *changesView, path string, force bool) {
	if live.job.running {
		u.banner.ShowInfo("A turn is running; revert when it has finished (or press Stop).")
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		var res filehistory.Result
		var err error
		if path == "" {
			res, err = sess.Files().RevertAll(force)
		} else {
			res, err = sess.Files().Revert(path, force)
		}
		return func() {
			switch {
			case errors.Is(err, workbench.ErrConflict):
				u.confirmOverwrite(err, func() { u.revertFiles(live, v, path, true) })
				return
			case err != nil:
				u.banner.ShowError("Could not revert: " + err.Error())
				return
			}
			u.banner.ShowInfo(fmt.Sprintf("Reverted %s.", text.Plural(len(res.Restored), "file")))
			v.dlg.Hide()
			if u.live == live {
				u.showChanges()
			}
		}
	})
}
