package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
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

// StopHookLimit is how many times in one turn Stop hooks may make the
// agent go on; after that the turn ends whatever they answer.
const StopHookLimit = 3

// maxHookContext caps, in bytes, what the hooks of one event add to the
// conversation.
const maxHookContext = 10_000

// maxHookRuns is how many of the latest runs a session keeps for the
// settings.
const maxHookRuns = 100

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

// hookState is a session's hooks: its configuration, the runs so far and
// what a hook left for later. Its methods are safe for concurrent use and
// on a nil state (a session opened with Inspect, or with hooks off).
type hookState struct {
	ws      string
	trust   func(hash string) bool // the trust check of the workspace file
	started chan struct{}          // closed when the SessionStart hooks of the open ended
	cancel  context.CancelFunc

	mu       sync.Mutex
	hooks    []hooks.Hook
	wf       hooks.WorkspaceFile
	trusted  string // the trust hash of the workspace hooks loaded
	notes    []string
	last     map[string]hooks.Run
	runs     []hooks.Run
	pending  string // SessionStart context for the next user message
	stop     string // why a hook ended the turn, until the turn ends
	stopping bool
}

// loadHooks reads the user's hooks and the workspace's trusted ones.
func loadHooks(cfg Config, ws string) *hookState {
	hs := &hookState{ws: ws, trust: trust.Check(cfg.Store, trust.Hooks, ws), started: make(chan struct{}), last: map[string]hooks.Run{}}
	switch {
	case cfg.Hooks.User != nil:
		hs.hooks = slices.Clone(cfg.Hooks.User)
	case cfg.UserConfigDir != "":
		user, notes, err := hooks.LoadUser()
		hs.hooks, hs.notes = user, notes
		if err != nil {
			hs.notes = append(hs.notes, err.Error())
		}
	}
	wsHooks, wf, notes, err := hooks.LoadWorkspace(ws, hs.trust)
	hs.wf, hs.notes = wf, append(hs.notes, notes...)
	if err != nil {
		hs.notes = append(hs.notes, err.Error())
	}
	if wf.NeedsTrust {
		hs.notes = append(hs.notes, hooks.UntrustedNote(ws))
	} else if len(wsHooks) > 0 {
		hs.trusted = wf.Hash
		hs.hooks = append(hs.hooks, wsHooks...)
	}
	return hs
}

// startHooks loads the session's hooks and runs its SessionStart hooks
// for source in the background; the first message waits for them.
func (s *Session) startHooks(source string) {
	if s.cfg.Hooks.Off {
		return
	}
	hs := loadHooks(s.cfg, s.meta.Workspace)
	s.hooks = hs
	for _, n := range hs.notes {
		s.emit(Event{Kind: EventHook, Reason: n, Err: n})
	}
	if !hs.has(hooks.SessionStart, source) {
		close(hs.started)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs.cancel = cancel
	env := s.env
	go func() {
		defer close(hs.started)
		out := s.runHooks(ctx, env, hooks.SessionStart, source, hooks.Input{Source: source}, nil)
		hs.addPending(out.Context)
	}()
}

// closeHooks stops SessionStart hooks still running.
func (s *Session) closeHooks() {
	if hs := s.hooks; hs != nil && hs.cancel != nil {
		hs.cancel()
	}
}

// has reports whether any hook of ev applies to subject.
func (hs *hookState) has(ev hooks.Event, subject string) bool {
	if hs == nil {
		return false
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hooks.Select(hs.hooks, ev, subject)) > 0
}

// selectHooks returns the hooks of ev for subject; the workspace's only
// while its file and scripts still have the hash the user trusted (a
// change drops them until trusted again, with a note).
func (hs *hookState) selectHooks(ev hooks.Event, subject string) (list []hooks.Hook, note string) {
	hs.mu.Lock()
	list = hooks.Select(hs.hooks, ev, subject)
	trusted := hs.trusted
	hs.mu.Unlock()
	if !slices.ContainsFunc(list, func(h hooks.Hook) bool { return h.Source == hooks.SourceWorkspace }) {
		return list, ""
	}
	_, cur, _, err := hooks.LoadWorkspace(hs.ws, hs.trust)
	if err == nil && !cur.NeedsTrust && cur.Hash == trusted {
		return list, ""
	}
	hs.mu.Lock()
	hs.hooks = slices.DeleteFunc(hs.hooks, func(h hooks.Hook) bool { return h.Source == hooks.SourceWorkspace })
	hs.trusted = ""
	if cur.Path != "" {
		cur.NeedsTrust = true
	}
	hs.wf = cur
	hs.mu.Unlock()
	note = fmt.Sprintf("the hooks of %s no longer run because the file or a script it names changed since it was trusted; review the changes, trust the file again in Settings or with `tally hooks trust --workspace %s`, and reopen the session",
		hooks.WorkspacePath(hs.ws), hs.ws)
	return slices.DeleteFunc(list, func(h hooks.Hook) bool { return h.Source == hooks.SourceWorkspace }), note
}

// runHooks runs the hooks of ev that apply to subject, all at once, with
// in (its common fields filled in here) and returns their combined
// outcome; every run is recorded and the ones worth showing are reported
// as EventHook. call is the tool call of a tool event.
func (s *Session) runHooks(ctx context.Context, env tool.Env, ev hooks.Event, subject string, in hooks.Input, call *transcript.ToolCall) hooks.Outcome {
	hs := s.hooks
	if hs == nil {
		return hooks.Outcome{}
	}
	list, note := hs.selectHooks(ev, subject)
	if note != "" {
		s.emit(Event{Kind: EventHook, Reason: note, Err: note})
	}
	if len(list) == 0 {
		return hooks.Outcome{}
	}
	in.SessionID, in.Cwd, in.HookEventName = s.meta.ID, s.meta.Workspace, ev
	in.PermissionMode = hooks.PermissionMode(string(s.gate.Mode()))
	runner := hooks.Runner{Env: env}
	runs := make([]hooks.Run, len(list))
	var wg sync.WaitGroup
	for i, h := range list {
		wg.Go(func() {
			runs[i] = runner.Run(ctx, h, in)
			runs[i].Subject = subject
			runs[i].Outcome = hooks.Interpret(runs[i])
		})
	}
	wg.Wait()
	outs := make([]hooks.Outcome, len(runs))
	for i, r := range runs {
		outs[i] = r.Outcome
		hs.record(r)
		if e, ok := hookEvent(r, call); ok {
			s.emit(e)
		}
	}
	return hooks.Combine(outs)
}

// hookEvent is the EventHook of a run worth showing.
func hookEvent(r hooks.Run, call *transcript.ToolCall) (Event, bool) {
	o := r.Outcome
	who := fmt.Sprintf("the %s hook %q", r.Event, text.Clip(r.Command, 60))
	what := ""
	if r.Subject != "" && (r.Event == hooks.PreToolUse || r.Event == hooks.PostToolUse) {
		what = " " + r.Subject
	}
	var reason string
	bad := true
	switch {
	case o.Error != "":
		reason = o.Error
	case o.Stop:
		reason = fmt.Sprintf("%s ended the turn: %s", who, text.OneLine(first(o.StopReason, "no reason given"), 200))
	case r.Event == hooks.PreToolUse && o.Permission == hooks.Deny:
		reason = fmt.Sprintf("%s refused%s: %s", who, what, text.OneLine(first(o.PermissionReason, o.Reason, "no reason given"), 200))
	case r.Event == hooks.UserPromptSubmit && o.Block:
		reason = fmt.Sprintf("%s refused the message: %s", who, text.OneLine(first(o.Reason, "no reason given"), 200))
	case r.Event == hooks.Stop && o.Block:
		reason, bad = fmt.Sprintf("%s did not let the turn end yet: %s", who, text.OneLine(first(o.Reason, "no reason given"), 200)), false
	case o.Block:
		reason, bad = fmt.Sprintf("%s objected%s: %s", who, what, text.OneLine(first(o.Reason, "no reason given"), 200)), false
	case len(o.UpdatedInput) > 0:
		reason, bad = fmt.Sprintf("%s changed the arguments of%s", who, what), false
	case o.Message != "":
		reason, bad = fmt.Sprintf("%s says: %s", who, text.OneLine(o.Message, 200)), false
	default:
		return Event{}, false
	}
	e := Event{Kind: EventHook, Reason: reason}
	if bad {
		e.Err = reason
	}
	if call != nil {
		c := *call
		e.Call = &c
	}
	return e, true
}

// first returns the first of ss that is not blank.
func first(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// record keeps r as its hook's last run and among the latest runs.
func (hs *hookState) record(r hooks.Run) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.last[r.HookID] = r
	hs.runs = append(hs.runs, r)
	if len(hs.runs) > maxHookRuns {
		hs.runs = slices.Delete(hs.runs, 0, len(hs.runs)-maxHookRuns)
	}
}

// addPending keeps SessionStart context for the next user message.
func (hs *hookState) addPending(ctx string) {
	if hs == nil || strings.TrimSpace(ctx) == "" {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.pending != "" {
		hs.pending += "\n\n"
	}
	hs.pending += strings.TrimSpace(ctx)
}

// takePending returns and forgets the SessionStart context.
func (hs *hookState) takePending() string {
	if hs == nil {
		return ""
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	p := hs.pending
	hs.pending = ""
	return p
}

// requestStop records that a hook ended the turn.
func (hs *hookState) requestStop(reason string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !hs.stopping {
		hs.stopping, hs.stop = true, first(reason, "a hook ended the turn")
	}
}

// stopRequested reports whether a hook ended the turn, and why.
func (hs *hookState) stopRequested() (string, bool) {
	if hs == nil {
		return "", false
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.stop, hs.stopping
}

// newTurn forgets the stop of the last turn.
func (hs *hookState) newTurn() {
	if hs == nil {
		return
	}
	hs.mu.Lock()
	hs.stop, hs.stopping = "", false
	hs.mu.Unlock()
}

// hookText makes hook output fit for the conversation: trimmed, capped at
// maxHookContext bytes, its secrets redacted and its engine tags
// neutralised, so it is data and can never open or close an engine block.
// It returns the count of secrets redacted.
func hookText(s string) (string, int) {
	s = text.ClipBytes(strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD"), maxHookContext)
	out, n := secrets.Count(s)
	return transcript.Neutralize(out), n
}
