package hooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/trust"
)

// StopLimit is how many times in one turn Stop hooks may make the agent
// go on; after that the turn ends whatever they answer.
const StopLimit = 3

// maxRuns is how many of the latest runs a session keeps for the
// settings.
const maxRuns = 100

// Options say which hooks a session runs. The zero value runs those of
// the workspace whose content the trust check accepts, and no user hooks.
type Options struct {
	// Workspace is the session's folder.
	Workspace string
	// Trusted reports whether the user trusts the workspace hooks file
	// with this fingerprint (see trust.Check).
	Trusted func(hash string) bool
	// User, when not nil, is the user's hooks; otherwise LoadUser reads
	// them when ReadUser is set.
	User     []Hook
	ReadUser bool
}

// Session is the hooks of one conversation: its configuration, the runs
// so far and what a hook left for later. Its methods are safe for
// concurrent use, and on a nil *Session (a session with hooks off), which
// has no hook.
type Session struct {
	ws    string
	trust func(hash string) bool

	// started is closed when the SessionStart hooks of the open ended.
	started chan struct{}
	cancel  context.CancelFunc

	mu      sync.Mutex
	hooks   []Hook
	wf      WorkspaceFile
	trusted string // the trust hash of the workspace hooks loaded
	// watch recorded what the last fingerprint that gave trusted looked
	// at: while it is unchanged the fingerprint is still trusted.
	watch    *trust.Watch
	notes    []string
	last     map[string]Run
	runs     []Run
	pending  string // SessionStart context for the next user message
	stop     string // why a hook ended the turn, until the turn ends
	stopping bool
}

// Open reads the user's hooks and the workspace's trusted ones. Problems
// with either file are Notes, one sentence each; nothing fails.
func Open(o Options) *Session {
	hs := &Session{ws: o.Workspace, trust: o.Trusted, started: make(chan struct{}), last: map[string]Run{}}
	if hs.trust == nil {
		hs.trust = func(string) bool { return false }
	}
	switch {
	case o.User != nil:
		hs.hooks = slices.Clone(o.User)
	case o.ReadUser:
		user, notes, err := LoadUser()
		hs.hooks, hs.notes = user, notes
		if err != nil {
			hs.notes = append(hs.notes, err.Error())
		}
	}
	w := trust.NewWatch()
	wsHooks, wf, notes, err := loadWorkspace(o.Workspace, hs.trust, w)
	hs.wf, hs.notes = wf, append(hs.notes, notes...)
	if err != nil {
		hs.notes = append(hs.notes, err.Error())
	}
	if wf.NeedsTrust {
		hs.notes = append(hs.notes, UntrustedNote(o.Workspace))
	} else if len(wsHooks) > 0 {
		hs.trusted, hs.watch = wf.Hash, w
		hs.hooks = append(hs.hooks, wsHooks...)
	}
	return hs
}

// Notes are the configuration's problems found when the hooks were read.
func (hs *Session) Notes() []string {
	if hs == nil {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.notes)
}

// Start runs fn, the SessionStart hooks of the open, in the background
// with a context Close cancels; WaitStarted waits for it. Without a
// SessionStart hook for source it marks the start done at once.
func (hs *Session) Start(source string, fn func(ctx context.Context)) {
	if !hs.Has(SessionStart, source) {
		close(hs.started)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs.cancel = cancel
	go func() {
		defer close(hs.started)
		fn(ctx)
	}()
}

// WaitStarted waits for the SessionStart hooks started by Start, or for
// ctx to end.
func (hs *Session) WaitStarted(ctx context.Context) error {
	if hs == nil {
		return nil
	}
	select {
	case <-hs.started:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops SessionStart hooks still running.
func (hs *Session) Close() {
	if hs != nil && hs.cancel != nil {
		hs.cancel()
	}
}

// Has reports whether any hook of ev applies to subject.
func (hs *Session) Has(ev Event, subject string) bool {
	if hs == nil {
		return false
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(Select(hs.hooks, ev, subject)) > 0
}

// selectHooks returns the hooks of ev for subject; the workspace's only
// while its file and scripts still have the hash the user trusted (a
// change drops them until trusted again, with a note) and the user still
// trusts it. The hash is computed again only when a path it covered has
// a new stamp (see trust.Watch); otherwise the check costs a metadata
// lookup of each path and no read.
func (hs *Session) selectHooks(ev Event, subject string) (list []Hook, note string) {
	hs.mu.Lock()
	list = Select(hs.hooks, ev, subject)
	trusted, watch := hs.trusted, hs.watch
	hs.mu.Unlock()
	if !slices.ContainsFunc(list, func(h Hook) bool { return h.Source == SourceWorkspace }) {
		return list, ""
	}
	if watch.Unchanged() && hs.trust(trusted) {
		return list, ""
	}
	w := trust.NewWatch()
	_, cur, _, err := loadWorkspace(hs.ws, hs.trust, w)
	if err == nil && !cur.NeedsTrust && cur.Hash == trusted {
		hs.mu.Lock()
		if hs.trusted == trusted {
			hs.watch = w
		}
		hs.mu.Unlock()
		return list, ""
	}
	hs.mu.Lock()
	hs.hooks = slices.DeleteFunc(hs.hooks, func(h Hook) bool { return h.Source == SourceWorkspace })
	hs.trusted, hs.watch = "", nil
	if cur.Path != "" {
		cur.NeedsTrust = true
	}
	hs.wf = cur
	hs.mu.Unlock()
	note = fmt.Sprintf("the hooks of %s no longer run because the file or a script it names changed since it was trusted; review the changes, trust the file again in Settings or with `tally hooks trust --workspace %s`, and reopen the session",
		WorkspacePath(hs.ws), hs.ws)
	return slices.DeleteFunc(list, func(h Hook) bool { return h.Source == SourceWorkspace }), note
}

// Run runs the hooks of ev that apply to subject, all at once, in env
// with in (whose HookEventName is set here), records every run and
// returns their combined outcome with the runs. note is set when the
// workspace's hooks were dropped because their content changed since it
// was trusted.
func (hs *Session) Run(ctx context.Context, env tool.Env, ev Event, subject string, in Input) (out Outcome, runs []Run, note string) {
	if hs == nil {
		return Outcome{}, nil, ""
	}
	list, note := hs.selectHooks(ev, subject)
	if len(list) == 0 {
		return Outcome{}, nil, note
	}
	in.HookEventName = ev
	runner := Runner{Env: env}
	runs = make([]Run, len(list))
	var wg sync.WaitGroup
	for i, h := range list {
		wg.Go(func() {
			runs[i] = runner.Run(ctx, h, in)
			runs[i].Subject = subject
			runs[i].Outcome = Interpret(runs[i])
		})
	}
	wg.Wait()
	outs := make([]Outcome, len(runs))
	for i, r := range runs {
		outs[i] = r.Outcome
		hs.record(r)
	}
	return Combine(outs), runs, note
}

// record keeps r as its hook's last run and among the latest runs.
func (hs *Session) record(r Run) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.last[r.HookID] = r
	hs.runs = append(hs.runs, r)
	if len(hs.runs) > maxRuns {
		hs.runs = slices.Delete(hs.runs, 0, len(hs.runs)-maxRuns)
	}
}

// AddPending keeps what SessionStart hooks added for the next user
// message.
func (hs *Session) AddPending(ctx string) {
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

// TakePending returns and forgets what SessionStart hooks added.
func (hs *Session) TakePending() string {
	if hs == nil {
		return ""
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	p := hs.pending
	hs.pending = ""
	return p
}

// RequestStop records that a hook ended the turn, and why.
func (hs *Session) RequestStop(reason string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !hs.stopping {
		hs.stopping, hs.stop = true, First(reason, "a hook ended the turn")
	}
}

// StopRequested reports whether a hook ended the turn, and why.
func (hs *Session) StopRequested() (string, bool) {
	if hs == nil {
		return "", false
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.stop, hs.stopping
}

// NewTurn forgets the stop of the last turn.
func (hs *Session) NewTurn() {
	if hs == nil {
		return
	}
	hs.mu.Lock()
	hs.stop, hs.stopping = "", false
	hs.mu.Unlock()
}

// Info is one hook of a session with its last run (nil before it first
// ran).
type Info struct {
	Hook
	Last *Run `json:"last,omitempty"`
}

// Status is the state of a session's hooks, for the settings and the
// trust banner.
type Status struct {
	// Hooks is every hook that runs: the user's first, then the
	// workspace's trusted ones, in their files' order.
	Hooks []Info `json:"hooks"`
	// Notes are the configuration's problems, one sentence each.
	Notes []string `json:"notes,omitempty"`
	// Workspace is the workspace's hooks file (Path "" when it has none);
	// Workspace.NeedsTrust asks the app for the trust prompt, and
	// Workspace.Preview lists what trusting it would run.
	Workspace WorkspaceFile `json:"workspace"`
}

// Status returns the session's hooks and their last runs; every value is
// a copy.
func (hs *Session) Status() Status {
	if hs == nil {
		return Status{}
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	st := Status{Notes: slices.Clone(hs.notes), Workspace: hs.wf}
	st.Workspace.Preview = slices.Clone(hs.wf.Preview)
	for _, hk := range hs.hooks {
		info := Info{Hook: hk}
		if r, ok := hs.last[hk.ID]; ok {
			info.Last = &r
		}
		st.Hooks = append(st.Hooks, info)
	}
	return st
}

// Runs returns the session's latest hook runs, oldest first (at most the
// last 100).
func (hs *Session) Runs() []Run {
	if hs == nil {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.runs)
}
