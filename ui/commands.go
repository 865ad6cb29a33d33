package ui

import (
	"context"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/settings"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The built-in slash commands typed in the prompt box (/compact,
// /new-cycle, /rewind, /model, /help; see command.ParseAction): each runs
// what its button or menu runs, and nothing is sent to the model. The
// other commands (command files, MCP prompts) expand into the message in
// the engine.

// runCommand performs built-in command inv typed in the prompt box of
// live. A command with wrong arguments stays in the prompt, with the
// banner saying why; otherwise the prompt is cleared and the action
// starts.
func (u *UI) runCommand(live *liveSession, inv command.Invocation, err error) {
	if err != nil {
		u.banner.ShowError("Not run: " + err.Error() + ".")
		return
	}
	u.input.prompt.SetText("")
	u.keepDraft(live)
	u.banner.Hide()
	switch inv.Command.Action {
	case command.ActionCompact:
		u.maint.Compact()
	case command.ActionNewCycle:
		u.maint.NewCycle()
	case command.ActionRewind:
		u.rewinds.RewindTo(inv.Turn)
	case command.ActionModel:
		u.showModel(live, inv)
	case command.ActionHelp:
		u.showHelp(live)
	}
}

// showModel runs /model: alone it opens the Switch the model dialog,
// with a name (and @profile) it switches at once.
func (u *UI) showModel(live *liveSession, inv command.Invocation) {
	if live == nil || live.sess == nil {
		return // still opening: nothing to show or switch yet
	}
	if live.info.demo {
		u.banner.ShowInfo("This demo session talks to a scripted model; open a session of your own to switch models.")
		return
	}
	if inv.Profile == "" && inv.Model == "" {
		u.showModelDialog(live)
		return
	}
	u.switchModel(live, inv.Profile, inv.Model)
}

// showModelDialog offers the endpoints (the main connection and the
// profiles), a model name and the reasoning effort of the session and
// each role, and switches live to what changed.
func (u *UI) showModelDialog(live *liveSession) {
	names := append([]string{settings.MainChoice}, u.settings.ProfileNames()...)
	endpoint := widget.NewSelect(names, nil)
	endpoint.SetSelected(orChoice(live.sess.Snapshot().Meta.Profile, settings.MainChoice))
	model := tw.NewEscEntry()
	model.SetText(live.info.model)
	endpoint.OnChanged = func(sel string) {
		model.SetText("")
		if p, ok := u.settings.ProfileNamed(sel); ok {
			model.SetText(p.Model)
		}
	}
	model.SetPlaceHolder("the endpoint's model")
	form := widget.NewForm(
		&widget.FormItem{Text: "Endpoint", Widget: endpoint},
		&widget.FormItem{Text: "Model", Widget: model},
	)
	efforts := u.wb.Efforts(live.id) // read when the session was shown
	roles, selects := effortSelects(efforts)
	for i, r := range roles {
		form.Append("Effort ("+r+")", selects[i])
	}
	note := &widget.Label{Text: "The conversation stays as it is; a new model's cache starts empty, so its next request is billed as a miss. The effort applies from the next request.",
		Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance}
	was := endpoint.Selected
	dlg := dialog.NewCustomConfirm("Model and effort", "Apply", "Cancel", container.NewVBox(form, note), func(ok bool) {
		if !ok {
			return
		}
		u.applyEfforts(live, efforts, roles, selects)
		if endpoint.Selected == was && strings.TrimSpace(model.Text) == live.info.model {
			return // the model stays
		}
		profile := endpoint.Selected
		if profile == settings.MainChoice {
			profile = workbench.MainProfile
		}
		u.switchModel(live, profile, strings.TrimSpace(model.Text))
	}, u.win)
	dlg.Resize(fyne.NewSize(min(520, u.win.Canvas().Size().Width-40), 420))
	dlg.Show()
	u.win.Canvas().Focus(model)
}

// switchModel switches live to model on profile ("" keeps its endpoint)
// off the UI goroutine, and says how it went in the banner.
func (u *UI) switchModel(live *liveSession, profile, model string) {
	sess, wb := live.sess, u.wb
	if sess == nil {
		return
	}
	if profile == "" {
		profile = orChoice(sess.Snapshot().Meta.Profile, workbench.MainProfile)
	}
	u.bridge.Work(func() func() {
		m, err := wb.ModelChoice(profile, model)
		if err == nil {
			err = sess.SwitchModel(m)
		}
		// The new model's window moves the gauge and its marks.
		window := sess.Snapshot().Window
		v := sess.Snapshot()
		level, exact := v.Level, v.Exact
		compactAt, cycleAt := v.CompactAt, v.CycleAt
		return func() {
			if err != nil {
				u.banner.ShowError("The model stays " + live.info.model + ": " + err.Error())
				return
			}
			live.info.model, live.info.window = m.ModelName, window
			if u.live == live {
				u.footer.State.Model = m.ModelName
				u.side.gauge.SetLevel(level, window, exact)
				u.setThresholds(live, compactAt, cycleAt)
				u.showTotals(live)
				u.footer.Update()
			}
			where := m.ModelName
			if m.Profile != "" {
				where += " on " + m.Profile
			}
			u.banner.ShowInfo("This session now talks to " + where + "; its next request starts that model's cache afresh.")
		}
	})
}

// showHelp lists the session's commands in the chat.
func (u *UI) showHelp(live *liveSession) {
	if live == nil || live.sess == nil {
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		cmds := sess.Commands()
		help := command.HelpText(cmds.List(context.Background()), cmds.Notes())
		return func() {
			if u.live == live {
				u.chat.Notice(help+"Type / in the prompt box to pick one.", false)
			}
		}
	})
}

// orChoice is v, or def when v is "".
func orChoice(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
