package ui

import (
	"context"
	"fmt"

	"github.com/tally-dev/tally/engine/agent"
)

// The built-in slash commands typed in the prompt box (/compact,
// /new-cycle, /rewind, /model, /help; see agent.ParseAction): each runs
// what its button or menu runs, and nothing is sent to the model. The
// other commands (command files, MCP prompts) expand into the message in
// the engine.

// runCommand performs built-in command inv typed in the prompt box of
// live. A command with wrong arguments stays in the prompt, with the
// banner saying why; otherwise the prompt is cleared and the action
// starts.
func (u *UI) runCommand(live *liveSession, inv agent.Invocation, err error) {
	if err != nil {
		u.banner.ShowError("Not run: " + err.Error() + ".")
		return
	}
	u.input.prompt.SetText("")
	u.keepDraft(live)
	u.banner.Hide()
	switch inv.Command.Action {
	case agent.ActionCompact:
		u.startCompaction()
	case agent.ActionNewCycle:
		u.startNewCycle()
	case agent.ActionRewind:
		u.rewindToTurn(live, inv.Turn)
	case agent.ActionModel:
		u.showModel(live, inv.Args)
	case agent.ActionHelp:
		u.showHelp(live)
	}
}

// rewindToTurn opens the Rewind dialog for turn n of live (0: its last
// turn), as "Rewind to here…" on that message does.
func (u *UI) rewindToTurn(live *liveSession, n int) {
	if live == nil || live.sess == nil {
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		turns := sess.Turns()
		var plan agent.RewindPlan
		err := rewindTarget(turns, &n)
		if err == nil {
			plan, err = sess.RewindPlan(n)
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

// rewindTarget checks that turn *n is among turns, setting it to the last
// one when it is 0.
func rewindTarget(turns []agent.Turn, n *int) error {
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

// showModel says which model live talks to and where to change it; a
// session's model comes from the settings, so /model NAME cannot switch
// it from the prompt box.
func (u *UI) showModel(live *liveSession, name string) {
	if live == nil {
		return
	}
	model := live.info.model
	if live.info.demo {
		u.banner.ShowInfo("This demo session talks to a scripted model; open a session of your own to choose one in Settings.")
		return
	}
	focus := func() {
		if f := u.openSettings(); f != nil {
			u.win.Canvas().Focus(f.model)
		}
	}
	msg := fmt.Sprintf("This session talks to %s. Change the model in Settings: the open session reconnects with it.", model)
	if name != "" && name != model {
		msg = fmt.Sprintf("The model stays %s: it is chosen in Settings, which reconnects the open session with %s once saved there.", model, name)
	}
	u.banner.ShowAction(msg, "Settings", focus)
}

// showHelp lists the session's commands in the chat.
func (u *UI) showHelp(live *liveSession) {
	if live == nil || live.sess == nil {
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		cmds := sess.Commands()
		help := agent.HelpText(cmds.List(context.Background()), cmds.Notes())
		return func() {
			if u.live == live {
				u.chat.notice(help+"Type / in the prompt box to pick one.", false)
			}
		}
	})
}
