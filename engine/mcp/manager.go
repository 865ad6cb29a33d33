package mcp

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/keychain"
	"github.com/tally-dev/tally/internal/serverlog"
)

// DefaultBudget is the catalog budget, in tokens: when the specs of all MCP
// tools together take more, the model gets the mcp_search tool instead.
const DefaultBudget = 8000

// Options configure a [Manager]. The zero value works: no logs, the
// default budget, a rough token count, no activation.
type Options struct {
	// LogPath names the stderr log file of a server, for example
	// <data>/mcp/<server>.log; nil or "" keeps no log.
	LogPath func(server string) string
	// LogLimit caps each log file in bytes; 0 means [serverlog.DefaultLimit].
	LogLimit int64
	// Dir is the workspace. The stdio servers of its own MCP file
	// (ServerConfig.Workspace) start in it; the user's start in the folder
	// of their configuration file (or an empty folder Tally owns) and
	// never have it on a search path (PATH, PYTHONPATH, NODE_PATH and the
	// like lose its entries, and relative ones). "" means Tally's own
	// folder for the workspace's servers.
	Dir string
	// Verify is asked before every start and restart of a workspace
	// server; an error refuses the start and marks the server
	// [StateUntrusted] with the error as its reason. The caller checks
	// that the server's trust still holds (see [TrustHash]). Nil starts
	// without asking.
	Verify func(name string, sc ServerConfig) error
	// Confine wraps the command of a workspace stdio server before every
	// start, so that it runs in the sandbox commands run in (see
	// tool.ConfineProgram); an error refuses the start. Nil starts it as
	// it is. The user's own servers are never confined.
	Confine func(*exec.Cmd) (*exec.Cmd, error)
	// Count counts the tokens of a text; nil estimates 4 bytes a token.
	Count func(string) int
	// Budget is the catalog budget in tokens; 0 means [DefaultBudget] and
	// a negative value means no budget (every tool is offered directly).
	Budget int
	// OnActivate receives the tools an mcp_search call activated; the
	// caller appends them to the catalog with tool.Registry.Activate. It
	// runs inside that tool call. Nil makes mcp_search only list matches.
	OnActivate func([]tool.Tool)
	// OnStatus is told every change of a server's state, from any
	// goroutine, without locks held.
	OnStatus func(ServerStatus)
	// Version is the client version sent to servers; "" means "dev".
	Version string
	// Elicit asks the user to fill in a form a server sends during a tool
	// call, and returns the answer; it may take as long as the user does
	// (the call's timeout pauses meanwhile), and ctx ends when the call
	// does. Accepted answers are checked against the form and completed
	// with its defaults before they reach the server ([Form.Accept]); an
	// error declines. Nil declines every form, noting in the server's log
	// that no one is there to fill it in.
	Elicit func(ctx context.Context, f Form) (Reply, error)
	// Tokens keeps the OAuth grants of HTTP servers; nil means the
	// user's keychain (keychain.Default).
	Tokens *keychain.Store
	// Browse, when set, lets an HTTP server sign in while it connects:
	// it is given the authorization page to show the user (print it,
	// open a browser). Nil never signs in: a server that asks for it is
	// marked StateSignIn.
	Browse func(url string) error
}

func (o *Options) clientVersion() string {
	if o.Version == "" {
		return "dev"
	}
	return o.Version
}

func (o *Options) count(s string) int {
	if o.Count != nil {
		return o.Count(s)
	}
	return (len(s) + 3) / 4
}

func (o *Options) budget() int {
	if o.Budget == 0 {
		return DefaultBudget
	}
	return o.Budget
}

// Catalog modes: decided at the first hand-out with tools to give.
type mode int

const (
	modeUndecided mode = iota
	modeDirect         // every tool is handed out
	modeSearch         // mcp_search is handed out; tools come through it
)

// Manager runs the configured MCP servers and offers their tools. It is
// safe for concurrent use.
//
// Tools are handed out through [Manager.Pending], in a stable order (by
// name, which sorts by server then tool), each exactly once, so a server
// that connects later only appends to the catalog and never reorders it.
// When the tools' specs exceed the budget, Pending hands out the mcp_search
// tool instead, and tools found by it are handed to Options.OnActivate.
type Manager struct {
	opts    Options
	servers map[string]*server
	names   []string
	search  *searchTool

	notifying sync.Mutex // OnStatus is called by one goroutine at a time
	neutralFolder

	mu     sync.Mutex
	tools  map[string]*Tool // by model-facing name
	handed map[string]bool  // names handed out (mcp_search included)
	mode   mode

	minRelist time.Duration // minRelist, shorter in tests
}

// NewManager prepares the servers of cfg without starting them; see
// [Manager.Start]. Disabled servers are listed with [StateDisabled].
func NewManager(cfg Config, opts Options) *Manager {
	m := &Manager{
		opts:    opts,
		servers: map[string]*server{},
		tools:   map[string]*Tool{},
		handed:  map[string]bool{},

		minRelist: minRelist,
	}
	m.search = &searchTool{m: m}
	for _, name := range cfg.Names() {
		sc := cfg.Servers[name]
		path := ""
		if opts.LogPath != nil {
			path = opts.LogPath(name)
		}
		s := &server{name: name, cfg: sc, m: m, log: serverlog.New(path, opts.LogLimit), state: StateIdle, allowRO: sc.AllowReadOnly}
		if sc.Disabled {
			s.state = StateDisabled
		}
		m.servers[name] = s
		m.names = append(m.names, name)
	}
	return m
}

// Start connects every enabled server that is not connected, in parallel,
// and returns when each has connected or failed (each within its timeout).
// Failures are recorded in [Manager.Statuses], not returned.
func (m *Manager) Start(ctx context.Context) {
	var wg sync.WaitGroup
	for _, name := range m.names {
		s := m.servers[name]
		if st := s.status().State; st == StateDisabled || st == StateConnected {
			continue
		}
		wg.Go(func() { _ = m.connect(ctx, s) })
	}
	wg.Wait()
}

// Connect (re)connects the named server, for a server started late or a
// retry from the settings, and returns the failure reason, if any. Its
// tools become available through [Manager.Pending].
func (m *Manager) Connect(ctx context.Context, name string) error {
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("there is no MCP server %q in the configuration; add it in the settings first", name)
	}
	if s.status().State == StateDisabled {
		return fmt.Errorf("the MCP server %q is disabled; enable it first", name)
	}
	return m.connect(ctx, s)
}

func (m *Manager) connect(ctx context.Context, s *server) error {
	s.mu.Lock()
	s.restarts = 0
	s.mu.Unlock()
	infos, err := s.connect(ctx)
	if err != nil {
		return err
	}
	m.addTools(s, infos)
	return nil
}

// refresh lists the tools of s again after it announced a change, or
// after the list it gave went stale (see relistStale): new tools become
// pending (appended to the catalog by the caller, never reordering it);
// tools it dropped stay listed and their calls fail with the server's
// error.
func (m *Manager) refresh(s *server) {
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CallTimeout())
	defer cancel()
	infos, fresh, err := listTools(ctx, cs)
	s.mu.Lock()
	s.listed, s.fresh = time.Now(), fresh
	s.mu.Unlock()
	if err != nil {
		s.log.Note("the server's tools could not be listed again: " + err.Error())
		return
	}
	m.addTools(s, infos)
	s.mu.Lock()
	s.tools = max(s.tools, len(infos))
	s.mu.Unlock()
}

// addTools records the listed tools of s. A tool already known keeps its
// spec (the catalog may hold it); a name taken by another tool is skipped.
func (m *Manager) addTools(s *server, infos []toolInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, info := range infos {
		t := newTool(s, info, m.opts.count)
		old, ok := m.tools[t.spec.Name]
		if ok {
			if old.srv != s || old.remote != info.Name {
				s.log.Note(fmt.Sprintf("tool %q skipped: its name %s is taken by %s", info.Name, t.spec.Name, old.remote))
			}
			continue
		}
		if t.spec.Name == searchName {
			continue
		}
		m.tools[t.spec.Name] = t
	}
}

// Close stops every server. The manager's tools then fail with a clear
// error.
func (m *Manager) Close() {
	var wg sync.WaitGroup
	for _, name := range m.names {
		wg.Go(m.servers[name].stop)
	}
	wg.Wait()
	m.removeNeutral()
}

// Statuses returns every configured server's status, sorted by name.
func (m *Manager) Statuses() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.names))
	for _, name := range m.names {
		out = append(out, m.servers[name].status())
	}
	return out
}

// notify hands st to Options.OnStatus, one call at a time: servers change
// state from their own goroutines.
func (m *Manager) notify(st ServerStatus) {
	if m.opts.OnStatus != nil {
		m.notifying.Lock()
		defer m.notifying.Unlock()
		m.opts.OnStatus(st)
	}
}

// SetAllowReadOnly sets whether the named server's read-only tools run
// without approval; it overrides the configuration's allowReadOnly.
func (m *Manager) SetAllowReadOnly(server string, allow bool) {
	if s, ok := m.servers[server]; ok {
		s.mu.Lock()
		s.allowRO = allow
		s.mu.Unlock()
	}
}

// Tools returns every known MCP tool, handed out or not, sorted by name.
func (m *Manager) Tools() []*Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sortedLocked(func(*Tool) bool { return true })
}

// Lookup returns the MCP tool with the given model-facing name.
func (m *Manager) Lookup(name string) (*Tool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tools[name]
	return t, ok
}

func (m *Manager) sortedLocked(keep func(*Tool) bool) []*Tool {
	out := make([]*Tool, 0, len(m.tools))
	for _, t := range m.tools {
		if keep(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *Tool) int { return strings.Compare(a.spec.Name, b.spec.Name) })
	return out
}

// Pending returns the tools not handed out yet and marks them handed out.
// The first call that has tools to give decides the mode: when all tools'
// specs fit the budget they are returned (sorted by name: the caller adds
// them with tool.Registry.AddExtra); otherwise only the mcp_search tool is.
// Later calls return the tools of servers that connected since (the caller
// appends them with tool.Registry.Activate), or mcp_search once, when they
// would pass the budget. In search mode tools reach the catalog only
// through mcp_search. Each call also starts listing again, in the
// background, the tools of a server whose list has gone stale by its
// cache hint (see relistStale); what that finds is pending at a later
// call.
func (m *Manager) Pending() []tool.Tool {
	m.relistStale()
	m.mu.Lock()
	defer m.mu.Unlock()
	fresh := m.sortedLocked(func(t *Tool) bool { return !m.handed[t.spec.Name] })
	if len(fresh) == 0 || m.mode == modeSearch {
		return nil
	}
	budget := m.opts.budget()
	used := 0
	for name := range m.handed {
		if t, ok := m.tools[name]; ok {
			used += t.tokens
		}
	}
	add := 0
	for _, t := range fresh {
		add += t.tokens
	}
	if budget >= 0 && used+add > budget {
		m.mode = modeSearch
		m.handed[searchName] = true
		return []tool.Tool{m.search}
	}
	m.mode = modeDirect
	out := make([]tool.Tool, len(fresh))
	for i, t := range fresh {
		m.handed[t.spec.Name] = true
		out[i] = t
	}
	return out
}

// Usage is the catalog's token account, for the context gauge.
type Usage struct {
	// Exposed is the tokens of the MCP specs handed out so far (tools and
	// mcp_search).
	Exposed int
	// All is the tokens all known MCP tools' specs would take.
	All int
	// Budget is the budget in force (negative: none).
	Budget int
	// Search is set when the catalog holds mcp_search instead of every
	// tool.
	Search bool
	// Tools counts the known tools; Handed those handed out.
	Tools, Handed int
}

// Usage returns the catalog's token account.
func (m *Manager) Usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := Usage{Budget: m.opts.budget(), Search: m.mode == modeSearch, Tools: len(m.tools)}
	for name, t := range m.tools {
		u.All += t.tokens
		if m.handed[name] {
			u.Exposed += t.tokens
			u.Handed++
		}
	}
	if m.handed[searchName] {
		u.Exposed += specTokens(m.search.Spec(), m.opts.count)
	}
	return u
}

// activate marks the tools handed out and gives the ones not yet handed
// to OnActivate. It returns which were newly activated.
func (m *Manager) activate(found []*Tool) (fresh []*Tool) {
	m.mu.Lock()
	for _, t := range found {
		if !m.handed[t.spec.Name] {
			m.handed[t.spec.Name] = true
			fresh = append(fresh, t)
		}
	}
	m.mu.Unlock()
	if len(fresh) > 0 && m.opts.OnActivate != nil {
		out := make([]tool.Tool, len(fresh))
		for i, t := range fresh {
			out[i] = t
		}
		m.opts.OnActivate(out)
	}
	return fresh
}
