package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// promptHooks runs the UserPromptSubmit hooks on the user's message in:
// one that blocks refuses it with a *CommandError (nothing entered the
// conversation, the message can be sent again), and the context they add,
// with what SessionStart hooks left, becomes a block of the message, after
// its text. It first waits for the SessionStart hooks of the open.
func (h hookRunner) prompt(ctx context.Context, in prepared) (prepared, error) {
	s := h.s
	hs := s.hooks
	if hs == nil {
		return in, nil
	}
	if err := hs.WaitStarted(ctx); err != nil {
		return in, err
	}
	out := h.run(ctx, s.env, hooks.UserPromptSubmit, "", hooks.Input{Prompt: in.typed}, nil)
	if ctx.Err() != nil {
		return in, ctx.Err()
	}
	if out.Block || out.Stop {
		why, _ := hooks.Text(hooks.First(out.Reason, out.StopReason, "no reason given"))
		return in, command.Errorf("a UserPromptSubmit hook refused the message (%s); change the message and send it again, or the hook", strings.TrimSuffix(text.OneLine(why, 500), "."))
	}
	var parts []string
	if p := hs.TakePending(); p != "" {
		parts = append(parts, p)
	}
	if out.Context != "" {
		parts = append(parts, out.Context)
	}
	if len(parts) == 0 {
		return in, nil
	}
	added, n := hooks.Text(strings.Join(parts, "\n\n"))
	in.blocks = append(in.blocks, transcript.Block{Type: transcript.BlockText, Text: "(context added by the user's hooks)\n" + added})
	in.noted += n
	return in, nil
}

// hookedTurn is the user's turn as the step loop runs it once hooks are
// in play: its steps count on from base (those before a Stop hook made the
// agent go on), and a hook that ended the turn ends it at the next step.
type hookedTurn struct {
	*turnLoop
	base int
}

func (h hookedTurn) Begin(step int) (string, error) {
	if _, stopped := h.s.hooks.StopRequested(); stopped {
		return ReasonHookStop, nil
	}
	return h.turnLoop.Begin(h.base + step)
}

// runTurn runs the step loop of a user's turn. When the model answered
// without calling a tool, the Stop hooks run: one that blocks makes the
// agent go on with its reason as a reminder appended to the conversation,
// at most hooks.StopLimit times a turn.
func (t *turnLoop) runTurn(ctx context.Context) step.End {
	s := t.s
	s.hooks.NewTurn()
	if s.hooks == nil {
		return step.Run(ctx, t, s.cfg.now)
	}
	steps := 0
	for n := 0; ; n++ {
		end := step.Run(ctx, hookedTurn{turnLoop: t, base: steps}, s.cfg.now)
		end.Steps += steps
		steps = end.Steps
		if end.Reason != step.ReasonDone || !s.hooks.Has(hooks.Stop, "") {
			return end
		}
		active := n > 0
		out := hookRunner{s}.run(ctx, s.env, hooks.Stop, "", hooks.Input{StopHookActive: &active}, nil)
		if !out.Block || out.Stop || ctx.Err() != nil {
			return end
		}
		if n >= hooks.StopLimit {
			msg := fmt.Sprintf("the Stop hooks asked the agent to go on more than %d times in this turn; the turn ends here", hooks.StopLimit)
			s.emit(Event{Kind: EventHook, Reason: msg, Err: msg})
			return end
		}
		why, red := hooks.Text(hooks.First(out.Reason, "a Stop hook asked you to go on without saying why"))
		m := transcript.Injected(transcript.KindReminder, "<system-reminder>\nThe user's Stop hook did not let the turn end yet. It says:\n"+why+"\n</system-reminder>", s.cfg.now())
		m.Redacted = red
		if err := s.commit([]transcript.Message{m}, nil); err != nil {
			return step.End{Reason: step.ReasonFailed, Steps: steps, Err: err}
		}
	}
}

// preCompactHooks runs the PreCompact hooks before a compaction (trigger
// "manual" when the user asked for it, "auto" otherwise); they block
// nothing.
func (h hookRunner) preCompact(ctx context.Context, manual bool) {
	s := h.s
	trigger := "auto"
	if manual {
		trigger = "manual"
	}
	if !s.hooks.Has(hooks.PreCompact, trigger) {
		return
	}
	none := ""
	h.run(ctx, s.env, hooks.PreCompact, trigger, hooks.Input{Trigger: trigger, CustomInstructions: &none}, nil)
}

// compactedHooks runs the SessionStart hooks of source "compact" after a
// compaction; what they add goes with the next user message.
func (h hookRunner) compacted(ctx context.Context) {
	s := h.s
	if !s.hooks.Has(hooks.SessionStart, "compact") {
		return
	}
	out := h.run(ctx, s.env, hooks.SessionStart, "compact", hooks.Input{Source: "compact"}, nil)
	s.hooks.AddPending(out.Context)
}
