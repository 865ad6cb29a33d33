package agent

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/trust"
)

// This file runs a session's MCP servers (package mcp): started in the
// background when the session is created or opened, their tools added to
// the catalog before a request, each addition a booked prefix change, and
// stopped when the session is closed.

// EventMCP reports a change of an MCP server's state (connected, failed,
// crashed, stopped) or a problem with the MCP configuration. Reason says
// what happened in one sentence; Err is set when a server failed or
// crashed, or a configuration file could not be used: the app shows it as
// a banner. Session.MCPStatus has the whole picture. Unlike other events,
// it may arrive from a background goroutine, outside a turn.
const EventMCP EventKind = "mcp"

// DefaultMCPWait is how long the first request after a session was created
// or opened waits for MCP servers still starting; a server that connects
// later appends its tools at the end of the catalog.
const DefaultMCPWait = 10 * time.Second

// MCPOptions tune a session's MCP servers. The zero value runs the user's
// servers (when Config.UserConfigDir is set, from the file at
// mcp.UserPath) and the servers of the workspace's .tally/mcp.json when the
// user trusted its exact content (see trust.Put).
type MCPOptions struct {
	// Off runs no MCP server.
	Off bool
	// User, when set, replaces the user's MCP file.
	User *mcp.Config
	// Budget is the catalog budget in tokens: 0 means mcp.DefaultBudget,
	// a negative value no budget.
	Budget int
	// Wait bounds how long the first request waits for servers still
	// starting; 0 means DefaultMCPWait.
	Wait time.Duration
	// LogDir holds the servers' stderr logs, <LogDir>/<server>.log; ""
	// means the "mcp" folder next to the store file.
	LogDir string
}

// MCPStatus is the state of a session's MCP servers, for the settings
// page, the banner and the context gauge.
type MCPStatus struct {
	// Servers is every configured server, sorted by name.
	Servers []mcp.ServerStatus
	// Usage is the catalog's token account: Usage.Exposed is what the MCP
	// tool specs in the catalog take, for the gauge.
	Usage mcp.Usage
	// Notes are the configuration's problems, one sentence each: an
	// unreadable file, an untrusted workspace file, a name clash.
	Notes []string
	// Workspace is the workspace's MCP file (Path "" when it has none);
	// Workspace.NeedsTrust asks the app for the trust prompt. It is also
	// set when the file, or a workspace file its servers run, changed
	// during the session: the server is then not restarted.
	Workspace mcp.WorkspaceFile
}

// SignIns returns the servers that wait for the user to sign in, for the
// banner's Sign in.
func (st MCPStatus) SignIns() []mcp.ServerStatus {
	var out []mcp.ServerStatus
	for _, s := range st.Servers {
		if s.State == mcp.StateSignIn {
			out = append(out, s)
		}
	}
	return out
}

// Problems returns the servers that failed or crashed, for the banner.
func (st MCPStatus) Problems() []mcp.ServerStatus {
	var out []mcp.ServerStatus
	for _, s := range st.Servers {
		if s.State == mcp.StateFailed || s.State == mcp.StateCrashed || s.State == mcp.StateUntrusted {
			out = append(out, s)
		}
	}
	return out
}

// mcpRun is a session's running MCP manager.
type mcpRun struct {
	mgr     *mcp.Manager
	cancel  context.CancelFunc
	started chan struct{} // closed when the first Start returned
	wait    time.Duration
	notes   []string
	trusted string // the trust hash of the workspace's servers started

	// Guarded by the session lock.
	waited bool // the first request waited for the start
	added  bool // a batch of tools reached the catalog

	mu        sync.Mutex
	ws        mcp.WorkspaceFile
	found     []tool.Tool // activated by mcp_search, not yet in the catalog
	closed    bool
	closeOnce sync.Once
}

// loadMCPConfig reads the user's MCP file and the workspace's trusted one
// and merges them; problems become notes.
func loadMCPConfig(cfg Config, workspace string) (mcp.Config, mcp.WorkspaceFile, []string) {
	var notes []string
	var user mcp.Config
	switch {
	case cfg.MCP.User != nil:
		user = *cfg.MCP.User
	case cfg.UserConfigDir != "":
		var err error
		if user, err = mcp.LoadUser(); err != nil {
			notes = append(notes, err.Error())
		}
	}
	wsCfg, wf, err := mcp.LoadWorkspace(workspace, trust.Check(cfg.Store, trust.MCP, workspace))
	if err != nil {
		notes = append(notes, err.Error())
	}
	if wf.NeedsTrust {
		notes = append(notes, mcp.UntrustedNote(workspace))
	}
	merged, clashes := mcp.Merge(user, wsCfg)
	return merged, wf, append(notes, clashes...)
}

// verifyMCP is asked before every start and restart of a workspace
// server: the workspace's MCP file and the files its servers run must
// still have the trust hash they had when the session started them, and
// the user must still trust it. Otherwise the server is refused and the
// file needs trust again.
func verifyMCP(cfg Config, ws string, r *mcpRun, name string) error {
	_, cur, err := mcp.LoadWorkspace(ws, trust.Check(cfg.Store, trust.MCP, ws))
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
		name, mcp.WorkspacePath(ws), ws)
}

// startMCP creates the session's MCP manager and starts connecting its
// servers in the background.
func (s *Session) startMCP() {
	o := s.cfg.MCP
	if o.Off {
		return
	}
	ws := s.meta.Workspace
	cfg, wf, notes := loadMCPConfig(s.cfg, ws)
	if len(cfg.Servers) == 0 && len(notes) == 0 && wf.Path == "" {
		return
	}
	r := &mcpRun{started: make(chan struct{}), wait: o.Wait, notes: notes, ws: wf}
	if !wf.NeedsTrust {
		r.trusted = wf.Hash
	}
	if r.wait <= 0 {
		r.wait = DefaultMCPWait
	}
	logDir := o.LogDir
	if logDir == "" && s.cfg.Store != nil && s.cfg.Store.Path() != "" {
		logDir = filepath.Join(filepath.Dir(s.cfg.Store.Path()), "mcp")
	}
	id := s.meta.ID
	// Workspace servers run in the sandbox of the session's commands, as
	// its settings stand now (a network switch turned later applies from
	// the next start of the session).
	confineEnv := s.env
	r.mgr = mcp.NewManager(cfg, mcp.Options{
		LogPath: func(server string) string {
			if logDir == "" {
				return ""
			}
			return filepath.Join(logDir, server+".log")
		},
		Dir:        ws,
		Verify:     func(name string, _ mcp.ServerConfig) error { return verifyMCP(s.cfg, ws, r, name) },
		Confine:    func(c *exec.Cmd) (*exec.Cmd, error) { return tool.ConfineProgram(&confineEnv, c) },
		Count:      tokens.Count,
		Budget:     o.Budget,
		OnActivate: r.queue,
		OnStatus:   func(st mcp.ServerStatus) { s.mcpEvent(r, id, st) },
		Elicit:     s.formAsker(id),
	})
	s.mcpRun = r
	for _, n := range notes {
		s.emitMCP(id, Event{Kind: EventMCP, Reason: n, Err: n})
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.started)
		r.mgr.Start(ctx)
	}()
}

// queue keeps the tools an mcp_search call activated for the next request
// (it runs inside that call, with the session lock held by the turn).
func (r *mcpRun) queue(ts []tool.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.found = append(r.found, ts...)
}

func (r *mcpRun) take() []tool.Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.found
	r.found = nil
	return out
}

// mcpEvent reports a server's change of state.
func (s *Session) mcpEvent(r *mcpRun, id string, st mcp.ServerStatus) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return
	}
	e := Event{Kind: EventMCP, Reason: fmt.Sprintf("MCP server %q is %s", st.Name, st.State)}
	if st.Reason != "" {
		e.Reason += ": " + st.Reason
	}
	if st.State == mcp.StateSignIn {
		e.Err = e.Reason
	}
	if st.State == mcp.StateFailed || st.State == mcp.StateCrashed || st.State == mcp.StateUntrusted {
		e.Err = e.Reason
		if st.LogPath != "" {
			e.Err += fmt.Sprintf(" (its log: %s)", st.LogPath)
		}
	}
	s.emitMCP(id, e)
}

// emitMCP is emit for events that may come from any goroutine: it reads
// nothing of the session but its ID, given.
func (s *Session) emitMCP(id string, e Event) {
	if s.cfg.OnEvent == nil {
		return
	}
	e.Session, e.Time = id, s.cfg.now()
	s.deliver(e)
}

// syncMCP adds the MCP tools not in the catalog yet, before a request: the
// first batch after the built-ins (when nothing was sent since the session
// was opened), later ones and mcp_search's finds at the very end. A change
// of a prefix already sent is booked; a session that never sent a request
// has no prefix to drift from. It runs with the session lock held; the
// first call waits, up to MCPOptions.Wait, for the servers to start.
func (s *Session) syncMCP() {
	r := s.mcpRun
	if r == nil {
		return
	}
	if !r.waited {
		r.waited = true
		t := time.NewTimer(r.wait)
		select {
		case <-r.started:
		case <-t.C:
		}
		t.Stop()
	}
	batch, found := r.mgr.Pending(), r.take()
	if len(batch)+len(found) == 0 {
		return
	}
	extra := !r.added && !s.sentSinceOpen
	var names []string
	for _, t := range batch {
		if extra {
			s.tools.AddExtra(t)
		} else {
			s.tools.Activate(t)
		}
		names = append(names, t.Spec().Name)
	}
	r.added = r.added || len(batch) > 0
	for _, t := range found {
		s.tools.Activate(t)
		names = append(names, t.Spec().Name)
	}
	s.resetPrefix()
	if s.st.Requests == 0 {
		s.sentFP, s.sentSystem = s.fp, s.st.System
		return
	}
	reason := "mcp tools added: " + summarizeNames(names, 3)
	if s.booked != "" {
		reason = s.booked + "; " + reason
	}
	s.bookPrefixChange(reason)
}

// summarizeNames lists up to n names and counts the rest.
func summarizeNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// closeMCP stops the session's MCP servers; calls to their tools then fail
// with a clear error.
func (s *Session) closeMCP() {
	r := s.mcpRun
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

// Status returns the state of the session's MCP servers and what their
// tools take in the catalog. It never waits for a running turn; a session
// without MCP servers (or opened with Inspect) gives the zero value.
func (h MCP) Status() MCPStatus {
	s := h.s
	r := s.mcpRun
	if r == nil {
		return MCPStatus{}
	}
	r.mu.Lock()
	wf := r.ws
	r.mu.Unlock()
	return MCPStatus{Servers: r.mgr.Statuses(), Usage: r.mgr.Usage(), Notes: slices.Clone(r.notes), Workspace: wf}
}

// Connect connects the named server again (the banner's or the
// settings' retry) and returns why it failed, if it did. Its tools reach
// the catalog at the end, at the next request, as a booked change. It
// never waits for a running turn.
func (h MCP) Connect(ctx context.Context, name string) error {
	s := h.s
	r := s.mcpRun
	if r == nil {
		return fmt.Errorf("this session runs no MCP servers; add one in Settings and open the session again")
	}
	return r.mgr.Connect(ctx, name)
}
