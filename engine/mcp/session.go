package mcp

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/tool"
)

// DefaultWait is how long the first request after a session was created
// or opened waits for servers still starting; a server that connects
// later appends its tools at the end of the catalog.
const DefaultWait = 10 * time.Second

// SessionOptions say which servers a session runs and how.
type SessionOptions struct {
	// Workspace is the session's folder; its servers start there.
	Workspace string
	// Trusted reports whether the user trusts the workspace MCP file with
	// this fingerprint (see trust.Check).
	Trusted func(hash string) bool
	// User, when set, replaces the user's MCP file; otherwise ReadUser
	// reads it (LoadUser).
	User     *Config
	ReadUser bool
	// Budget is the catalog budget in tokens: 0 means DefaultBudget, a
	// negative value no budget.
	Budget int
	// Wait bounds how long the first request waits for servers still
	// starting; 0 means DefaultWait.
	Wait time.Duration
	// LogDir holds the servers' stderr logs, <LogDir>/<server>.log; ""
	// keeps none.
	LogDir string
	// Confine wraps a workspace server's command in the sandbox of the
	// session's commands.
	Confine func(*exec.Cmd) (*exec.Cmd, error)
	// Count counts the tokens of a tool spec.
	Count func(string) int
	// OnStatus is told every change of a server's state, from any
	// goroutine, until Close.
	OnStatus func(ServerStatus)
	// Elicit asks the user to fill in a form a server sends.
	Elicit func(context.Context, Form) (Reply, error)
}

// SessionStatus is the state of a session's servers, for the settings
// page, the banner and the context gauge.
type SessionStatus struct {
	// Servers is every configured server, sorted by name.
	Servers []ServerStatus
	// Usage is the catalog's token account: Usage.Exposed is what the MCP
	// tool specs in the catalog take, for the gauge.
	Usage Usage
	// Notes are the configuration's problems, one sentence each: an
	// unreadable file, an untrusted workspace file, a name clash.
	Notes []string
	// Workspace is the workspace's MCP file (Path "" when it has none);
	// Workspace.NeedsTrust asks the app for the trust prompt. It is also
	// set when the file, or a workspace file its servers run, changed
	// during the session: the server is then not restarted.
	Workspace WorkspaceFile
}

// SignIns returns the servers that wait for the user to sign in, for the
// banner's Sign in.
func (st SessionStatus) SignIns() []ServerStatus {
	var out []ServerStatus
	for _, s := range st.Servers {
		if s.State == StateSignIn {
			out = append(out, s)
		}
	}
	return out
}

// Problems returns the servers that failed or crashed, for the banner.
func (st SessionStatus) Problems() []ServerStatus {
	var out []ServerStatus
	for _, s := range st.Servers {
		if s.State == StateFailed || s.State == StateCrashed || s.State == StateUntrusted {
			out = append(out, s)
		}
	}
	return out
}

// Session is the running servers of one conversation. Its methods are
// safe for concurrent use, and on a nil *Session (a session without
// servers), which has none.
type Session struct {
	mgr     *Manager
	cancel  context.CancelFunc
	started chan struct{} // closed when the first Start returned
	wait    time.Duration
	notes   []string
	trusted string // the trust hash of the workspace's servers started

	mu        sync.Mutex
	waited    bool // the first request waited for the start
	added     bool // a batch of tools reached the catalog
	ws        WorkspaceFile
	found     []tool.Tool // activated by mcp_search, not yet in the catalog
	closed    bool
	closeOnce sync.Once
}

// StartSession reads the user's MCP file and the workspace's trusted one,
// merges them and starts connecting their servers in the background. It
// returns nil when there is no server, no note and no workspace file.
func StartSession(o SessionOptions) *Session {
	cfg, wf, notes := loadConfig(o)
	if len(cfg.Servers) == 0 && len(notes) == 0 && wf.Path == "" {
		return nil
	}
	r := &Session{started: make(chan struct{}), wait: o.Wait, notes: notes, ws: wf}
	if !wf.NeedsTrust {
		r.trusted = wf.Hash
	}
	if r.wait <= 0 {
		r.wait = DefaultWait
	}
	ws := o.Workspace
	r.mgr = NewManager(cfg, Options{
		LogPath: func(server string) string {
			if o.LogDir == "" {
				return ""
			}
			return filepath.Join(o.LogDir, server+".log")
		},
		Dir:        ws,
		Verify:     func(name string, _ ServerConfig) error { return r.verify(o, name) },
		Confine:    o.Confine,
		Count:      o.Count,
		Budget:     o.Budget,
		OnActivate: r.queue,
		OnStatus: func(st ServerStatus) {
			r.mu.Lock()
			closed := r.closed
			r.mu.Unlock()
			if !closed && o.OnStatus != nil {
				o.OnStatus(st)
			}
		},
		Elicit: o.Elicit,
	})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.started)
		r.mgr.Start(ctx)
	}()
	return r
}

// loadConfig reads the user's MCP file and the workspace's trusted one
// and merges them; problems become notes.
func loadConfig(o SessionOptions) (Config, WorkspaceFile, []string) {
	var notes []string
	var user Config
	switch {
	case o.User != nil:
		user = *o.User
	case o.ReadUser:
		var err error
		if user, err = LoadUser(); err != nil {
			notes = append(notes, err.Error())
		}
	}
	wsCfg, wf, err := LoadWorkspace(o.Workspace, o.trusted())
	if err != nil {
		notes = append(notes, err.Error())
	}
	if wf.NeedsTrust {
		notes = append(notes, UntrustedNote(o.Workspace))
	}
	merged, clashes := Merge(user, wsCfg)
	return merged, wf, append(notes, clashes...)
}

func (o SessionOptions) trusted() func(string) bool {
	if o.Trusted == nil {
		return func(string) bool { return false }
	}
	return o.Trusted
}

// verify is asked before every start and restart of a workspace server:
// the workspace's MCP file and the files its servers run must still have
// the trust hash they had when the session started them, and the user
// must still trust it. Otherwise the server is refused and the file needs
// trust again.
func (r *Session) verify(o SessionOptions, name string) error {
	_, cur, err := LoadWorkspace(o.Workspace, o.trusted())
	if err == nil && cur.Path != "" && !cur.NeedsTrust && cur.Hash == r.trusted {
		return nil
	}
	if cur.Path != "" {
		cur.NeedsTrust = true
	}
	r.mu.Lock()
	r.ws = cur
	r.mu.Unlock()
	return fmt.Errorf("the workspace MCP server %q was not started because %s or a workspace file it runs changed since it was trusted; review the changes, trust the file again in Settings or with `tally mcp trust --workspace %s`, and reopen the session",
		name, WorkspacePath(o.Workspace), o.Workspace)
}

// Notes are the configuration's problems found at the start.
func (r *Session) Notes() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.notes)
}

// Manager is the session's manager of servers, nil without servers.
func (r *Session) Manager() *Manager {
	if r == nil {
		return nil
	}
	return r.mgr
}

// AwaitStart waits, the first time it is called, for the servers still
// starting, at most SessionOptions.Wait; later calls return at once.
func (r *Session) AwaitStart() {
	if r == nil {
		return
	}
	r.mu.Lock()
	waited := r.waited
	r.waited = true
	r.mu.Unlock()
	if waited {
		return
	}
	t := time.NewTimer(r.wait)
	defer t.Stop()
	select {
	case <-r.started:
	case <-t.C:
	}
}

// queue keeps the tools an mcp_search call activated for the next request.
func (r *Session) queue(ts []tool.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.found = append(r.found, ts...)
}

// Take returns the tools to add to the catalog before a request: batch,
// the servers' tools connected since the last call, and found, those
// mcp_search activated. first says batch is the first one to reach the
// catalog.
func (r *Session) Take() (batch, found []tool.Tool, first bool) {
	if r == nil {
		return nil, nil, false
	}
	batch = r.mgr.Pending()
	r.mu.Lock()
	defer r.mu.Unlock()
	found, r.found = r.found, nil
	first = !r.added && len(batch) > 0
	r.added = r.added || len(batch) > 0
	return batch, found, first
}

// Close stops the servers; calls to their tools then fail with a clear
// error, and OnStatus is told nothing more.
func (r *Session) Close() {
	if r == nil {
		return
	}
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.cancel()
		<-r.started // a start cut short records its failure first
		r.mgr.Close()
	})
}

// Status returns the state of the servers and what their tools take in
// the catalog; the zero value without servers.
func (r *Session) Status() SessionStatus {
	if r == nil {
		return SessionStatus{}
	}
	r.mu.Lock()
	wf := r.ws
	r.mu.Unlock()
	return SessionStatus{Servers: r.mgr.Statuses(), Usage: r.mgr.Usage(), Notes: slices.Clone(r.notes), Workspace: wf}
}

// Connect connects the named server again (the banner's or the settings'
// retry) and returns why it failed, if it did. Its tools reach the
// catalog at the end, at the next request.
func (r *Session) Connect(ctx context.Context, name string) error {
	if r == nil {
		return fmt.Errorf("this session runs no MCP servers; add one in Settings and open the session again")
	}
	return r.mgr.Connect(ctx, name)
}

// DescribeStatus is the one sentence for a server's change of state, and,
// when it is a problem for a banner (a failure, a crash, a sign-in
// wanted), the same sentence as problem, with the log's path for a
// failure.
func DescribeStatus(st ServerStatus) (reason, problem string) {
	reason = fmt.Sprintf("MCP server %q is %s", st.Name, st.State)
	if st.Reason != "" {
		reason += ": " + st.Reason
	}
	switch st.State {
	case StateSignIn:
		problem = reason
	case StateFailed, StateCrashed, StateUntrusted:
		problem = reason
		if st.LogPath != "" {
			problem += fmt.Sprintf(" (its log: %s)", st.LogPath)
		}
	}
	return reason, problem
}
