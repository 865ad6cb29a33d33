package agent

import (
	"context"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/trust"
)

// This file runs a session's command hooks (package hooks): loaded when
// the session is created or opened, run at SessionStart, UserPromptSubmit,
// PreToolUse, PostToolUse, PreCompact and Stop. What a hook adds to the
// conversation is appended at its tail (the user's message, a tool
// result, a reminder after the answer), never to the system prompt or an
// earlier message, so the prompt cache stays as warm as without hooks.

// EventHook reports a hook run worth showing: one that blocked or refused
// (a message, a call, the end of a turn), changed a call's arguments,
// ended the turn, failed or timed out, or a problem with the hooks
// configuration (an unreadable or untrusted file). Reason says what
// happened in one sentence; Err is set, with the same sentence, when the
// hook blocked, failed or the configuration could not be used: the app
// shows it as a banner, and Session.Hooks has the whole picture. Call is
// the tool call of a PreToolUse or PostToolUse hook. Like EventMCP it may
// arrive outside a turn (SessionStart hooks run in the background).
const EventHook EventKind = "hook"

// ReasonHookStop ends a turn that a hook stopped ("continue": false).
const ReasonHookStop = "hook_stop"

// HooksOptions tune a session's hooks. The zero value runs the user's
// hooks (when Config.UserConfigDir is set, from hooks.UserPath) and those
// of the workspace's .tally/hooks.json when the user trusted its exact
// content (see trust.Put).
type HooksOptions struct {
	// Off runs no hook.
	Off bool
	// User, when not nil, replaces the user's hooks file.
	User []hooks.Hook
}

// hookRunner runs the session's command hooks at the points of a
// session's life they name, and reports what they did as events.
type hookRunner struct{ s *Session }

// start loads the session's hooks and runs its SessionStart hooks
// for source in the background; the first message waits for them.
func (h hookRunner) start(source string) {
	s := h.s
	if s.cfg.Hooks.Off {
		return
	}
	hs := hooks.Open(hooks.Options{Workspace: s.meta.Workspace, Trusted: trust.Check(s.cfg.Store, trust.Hooks, s.meta.Workspace),
		User: s.cfg.Hooks.User, ReadUser: s.cfg.UserConfigDir != ""})
	s.hooks = hs
	for _, n := range hs.Notes() {
		s.emit(Event{Kind: EventHook, Reason: n, Err: n})
	}
	env := s.env
	hs.Start(source, func(ctx context.Context) {
		out := h.run(ctx, env, hooks.SessionStart, source, hooks.Input{Source: source}, nil)
		hs.AddPending(out.Context)
	})
}

// Hooks returns the session's command hooks: which run, each one's last
// run and the latest runs (nil, with none, when hooks are off).
func (s *Session) Hooks() *hooks.Session { return s.hooks }

// runHooks runs the hooks of ev that apply to subject, all at once, with
// in (its common fields filled in here) and returns their combined
// outcome; every run is recorded and the ones worth showing are reported
// as EventHook. call is the tool call of a tool event.
func (h hookRunner) run(ctx context.Context, env tool.Env, ev hooks.Event, subject string, in hooks.Input, call *transcript.ToolCall) hooks.Outcome {
	s := h.s
	if s.hooks == nil {
		return hooks.Outcome{}
	}
	in.SessionID, in.Cwd = s.meta.ID, s.meta.Workspace
	in.PermissionMode = hooks.PermissionMode(string(s.gate.Mode()))
	out, runs, note := s.hooks.Run(ctx, env, ev, subject, in)
	if note != "" {
		s.emit(Event{Kind: EventHook, Reason: note, Err: note})
	}
	for _, r := range runs {
		reason, bad, ok := hooks.Describe(r)
		if !ok {
			continue
		}
		e := Event{Kind: EventHook, Reason: reason}
		if bad {
			e.Err = reason
		}
		if call != nil {
			c := *call
			e.Call = &c
		}
		s.emit(e)
	}
	return out
}
