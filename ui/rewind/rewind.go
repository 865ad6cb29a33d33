package rewind

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// rewindChoice is what the Rewind dialog's buttons restore.
type rewindChoice struct{ files, chat bool }

// Dialog is the content of the Rewind dialog: the files and the messages
// a rewind to the start of a turn restores and takes out, with a choice of
// both, the files only or the conversation only.
type Dialog struct {
	widget.BaseWidget

	plan    rewind.Plan
	both    *widget.Button
	files   *widget.Button
	chat    *widget.Button
	cancel  *widget.Button
	content fyne.CanvasObject
	dlg     *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *Dialog) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.content) }

// Rewind reads the dry run of a rewind of the shown session to the turn
// of its user row r, off the UI goroutine, and opens the dialog.
func (vs *Views) Rewind(r Row) {
	s := vs.h.Current()
	if s == nil || s.Engine() == nil {
		return
	}
	if s.Running() {
		vs.h.Info("A turn is running; rewind when it has finished (or press Stop).")
		return
	}
	sess := s.Engine()
	readThen(vs, s, "Cannot rewind: ", func() (rewind.Plan, error) {
		turn, ok := TurnOf(sess.Snapshot().Turns(), r)
		if !ok {
			return rewind.Plan{}, errors.New("this message has no turn number (it was sent by an older Tally)")
		}
		return sess.Rewind().Plan(turn)
	}, func(plan rewind.Plan) { vs.show(s, plan) })
}

// readThen runs read off the UI goroutine and then, while s is still the
// shown session, hands what it read to show, or says what failed (failed
// starts the sentence).
func readThen[T any](vs *Views, s Session, failed string, read func() (T, error), show func(T)) {
	vs.h.Work(func() func() {
		v, err := read()
		return func() {
			if !s.Shown() {
				return
			}
			if err != nil {
				vs.h.Error(failed + err.Error())
				return
			}
			show(v)
		}
	})
}

// TurnOf finds the turn of a user row: by the time and body of its
// message, which no rewrite of the log changes (a compaction or a new
// cycle moves the message or archives it), else by its log index.
func TurnOf(turns []rewind.Turn, r Row) (int, bool) {
	if !r.Sent.IsZero() {
		for _, t := range turns {
			if t.Time.Equal(r.Sent) && t.SHA != "" && strings.HasPrefix(r.Sha, t.SHA) {
				return t.N, true
			}
		}
	}
	return turnOfLogIndex(turns, r.LogIndex)
}

// turnOfLogIndex finds the turn number of the user message at a log index.
func turnOfLogIndex(turns []rewind.Turn, i int) (int, bool) {
	for _, t := range turns {
		if t.LogIndex == i && i >= 0 {
			return t.N, true
		}
	}
	return 0, false
}

// RewindTo opens the Rewind dialog for turn n of the shown session (0:
// its last turn), as "Rewind to here…" on that message does.
func (vs *Views) RewindTo(n int) {
	s := vs.h.Current()
	if s == nil || s.Engine() == nil {
		return
	}
	sess := s.Engine()
	readThen(vs, s, "Cannot rewind: ", func() (rewind.Plan, error) {
		if err := rewindTarget(sess.Snapshot().Turns(), &n); err != nil {
			return rewind.Plan{}, err
		}
		return sess.Rewind().Plan(n)
	}, func(plan rewind.Plan) { vs.show(s, plan) })
}

// rewindTarget checks that turn *n is among turns, setting it to the last
// one when it is 0.
func rewindTarget(turns []rewind.Turn, n *int) error {
	if len(turns) == 0 {
		return fmt.Errorf("this session has no turn yet; send a message first")
	}
	if *n == 0 {
		*n = turns[len(turns)-1].N
		return nil
	}
	for _, t := range turns {
		if t.N == *n {
			return nil
		}
	}
	return fmt.Errorf("this session has no turn %d; its turns are numbered %d to %d", *n, turns[0].N, turns[len(turns)-1].N)
}

// show opens the Rewind dialog for a dry run.
func (vs *Views) show(s Session, plan rewind.Plan) {
	v := &Dialog{plan: plan}
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
		vs.run(s, plan, c, false)
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
	win := vs.h.Window
	v.dlg = dialog.NewCustomWithoutButtons("Rewind", v, win)
	v.dlg.SetButtons([]fyne.CanvasObject{v.cancel, v.chat, v.files, v.both})
	v.dlg.Resize(fyne.NewSize(min(860, win.Canvas().Size().Width-40), min(600, win.Canvas().Size().Height-40)))
	v.dlg.Show()
}

// restoreRow shows one file of a rewind plan: what happens to it, a
// conflict in warning colour, and its diff, open when open.
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
	// A short plan shows its diffs at once.
	return container.NewVBox(lbl, NewFold("Diff of what restoring does", tw.DiffView(&d, nil, nil), open))
}

// run applies the rewind of plan off the UI goroutine; a conflict asks
// before overwriting, then tries again with force.
func (vs *Views) run(s Session, plan rewind.Plan, c rewindChoice, force bool) {
	turn := plan.Turn.N
	ctx, ok := s.Begin("rewinding…")
	if !ok {
		return
	}
	sess := s.Engine()
	vs.h.Work(func() func() {
		res, err := sess.Rewind().Apply(ctx, turn, c.files, c.chat, force)
		return func() {
			if !s.End() {
				return
			}
			s.Idle()
			switch {
			case errors.Is(err, workbench.ErrConflict):
				vs.confirmOverwrite(err, func() { vs.run(s, plan, c, true) })
				return
			case err != nil:
				vs.h.Error("Could not rewind: " + err.Error())
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
			vs.h.Info(msg + ".")
			if c.chat {
				files := -1
				if c.files {
					files = len(res.Files.Restored)
				}
				s.Rewound(plan.Superseded, files, res.Text)
				return
			}
			if s.Shown() {
				s.Notice(fmt.Sprintf("Files rewound to the start of turn %d · files restored: %d (the conversation stays as it is)",
					turn, len(res.Files.Restored)))
			}
		}
	})
}

// confirmOverwrite asks before overwriting files changed outside Tally.
func (vs *Views) confirmOverwrite(err error, yes func()) {
	msg := "Some files were changed outside Tally since the agent last wrote them:\n\n" + err.Error() +
		"\n\nOverwrite them with the saved content? Your outside changes to those files are lost."
	dialog.ShowConfirm("Overwrite changed files?", msg, func(ok bool) {
		if ok {
			yes()
		}
	}, vs.h.Window)
}
