package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/internal/sandbox"
)

// Defaults of the bounded waits of [Options].
const (
	// DefaultStartTimeout is how long a server has to answer initialize.
	DefaultStartTimeout = 20 * time.Second
	// DefaultRequestTimeout bounds one request, and how long a server may
	// take to read what Tally writes to it.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultSettle bounds how long [Manager.Diagnostics] waits for a
	// running server's diagnostics.
	DefaultSettle = 5 * time.Second
)

// quiet is how long a server must have published nothing before its
// diagnostics count as settled when it does not say which version of a
// file they are for (bounded by the Settle wait).
const quiet = 300 * time.Millisecond

// maxQuiet bounds the quiet spell of a server that took long to publish:
// one that does not say the version waits at least as long as its
// publishes took after the file was sent, up to this, since a busy
// server (typescript-language-server on a loaded machine) publishes a
// file's syntax diagnostics first and its type errors seconds later.
const maxQuiet = 3 * time.Second

// versionedQuiet is how long a server must have published nothing before
// diagnostics it says are for the current version of a file count as
// settled: it may publish again for that version once it checked more
// (gopls, busy loading packages, first publishes a file's syntax errors
// alone).
const versionedQuiet = 200 * time.Millisecond

// Options configure the [Manager] of one workspace.
type Options struct {
	// Workspace is the folder the servers work on; it is their root and
	// working folder, and every path given or returned is inside it.
	Workspace string
	// Servers are the configured servers, in order of preference for
	// navigation; nil means [Defaults]. See [LoadConfig].
	Servers []ServerConfig
	// Confine wraps a server's command before every start, so that it
	// runs in the sandbox the session's commands run in (the agent passes
	// tool.ConfineProgram, which calls sandbox.Wrap); an error refuses
	// the start and marks the server failed with it. The returned command
	// is started in place of the given one, which already has its
	// program, arguments, folder, environment and pipes set. Servers
	// read the workspace's code and may run its build tools, so the
	// caller should confine them like commands. Nil runs them unconfined.
	Confine func(*exec.Cmd) (*exec.Cmd, error)
	// Env is the servers' environment ("NAME=value"), normally the
	// allow-listed one commands get; nil means sandbox.Environ of Tally's
	// own. Entries of PATH, PYTHONPATH, NODE_PATH and the other search
	// paths that are relative or inside the workspace are removed, so a
	// repository cannot substitute a program for a server.
	Env []string
	// SearchDirs are the folders a server's program is looked for in when
	// it is not on the environment's PATH; nil means [SearchDirs] (Tally's
	// own folder of servers and a checkout's .tools).
	SearchDirs []string
	// LogDir receives each server's log (its stderr and the messages it
	// logs), <LogDir>/<name>-<workspace hash>.log, so the managers of two
	// workspaces never share a file; [ServerStatus] names it. "" keeps
	// only the last error line in memory.
	LogDir string
	// StartTimeout bounds the answer to initialize (0 means
	// [DefaultStartTimeout]); RequestTimeout bounds each request and each
	// write (0 means [DefaultRequestTimeout]); Settle bounds the wait for
	// diagnostics (0 means [DefaultSettle]).
	StartTimeout, RequestTimeout, Settle time.Duration
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.Servers == nil {
		o.Servers = Defaults()
	}
	if o.Env == nil {
		o.Env = sandbox.Environ(os.Environ(), nil)
	}
	if o.SearchDirs == nil {
		o.SearchDirs = SearchDirs()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	return o
}

// Manager runs the language servers of one workspace and keeps them in
// step with the files Tally syncs. It is safe for concurrent use. Obtain
// one with [Acquire]; every method returns within its bounded wait
// (Options.StartTimeout, RequestTimeout, Settle) whatever the servers do,
// and never panics on what a server sends.
type Manager struct {
	opts   Options
	ws     string // the workspace as given, cleaned and absolute
	real   string // the workspace with its symlinks resolved
	key    string
	broken error // set when the workspace cannot be used
	root   *os.Root
	env    []string

	servers []*server

	mu      sync.Mutex
	docs    map[string]*document
	closed  bool
	changed chan struct{} // closed and replaced when any server's state changes
	scanAt  time.Time
	scanExt map[string]bool
}

// registry holds the shared managers by workspace.
var registry = struct {
	sync.Mutex
	m map[string]*shared
}{m: map[string]*shared{}}

type shared struct {
	m    *Manager
	refs int
}

// Acquire returns the manager of opts.Workspace, shared by every caller
// that acquired it and has not released it yet, and the function that
// releases this hold (calling it again does nothing). The first caller's
// options configure the manager; a later caller's are ignored while it
// lives. The last release stops its servers (each is asked to shut down,
// then killed, within about two seconds) and closes the manager: its
// methods then report that it was released. A workspace that is not an
// existing folder gives a manager whose methods report that.
func Acquire(opts Options) (*Manager, func()) {
	key := workspaceKey(opts.Workspace)
	registry.Lock()
	sh := registry.m[key]
	if sh == nil {
		m := newManager(opts, key)
		if m.broken != nil {
			registry.Unlock()
			return m, func() {} // not shared: the folder may exist on the next try
		}
		sh = &shared{m: m}
		registry.m[key] = sh
	}
	sh.refs++
	registry.Unlock()
	var once sync.Once
	return sh.m, func() {
		once.Do(func() {
			registry.Lock()
			sh.refs--
			last := sh.refs == 0
			if last && registry.m[key] == sh {
				delete(registry.m, key)
			}
			registry.Unlock()
			if last {
				sh.m.close()
			}
		})
	}
}

// workspaceKey is the registry key of a workspace: absolute, cleaned,
// with symlinks resolved where possible.
func workspaceKey(ws string) string {
	if ws == "" {
		return ""
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return ws
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func newManager(opts Options, key string) *Manager {
	opts = opts.withDefaults()
	m := &Manager{opts: opts, key: key, docs: map[string]*document{}, changed: make(chan struct{})}
	m.ws, m.real = key, key
	if abs, err := filepath.Abs(opts.Workspace); err == nil {
		m.ws = abs
	}
	switch fi, err := os.Stat(m.real); {
	case opts.Workspace == "":
		m.broken = errors.New("no workspace was given to the language servers; open a workspace folder first")
	case err != nil:
		m.broken = fmt.Errorf("the workspace %s cannot be used for language servers (%w); open an existing folder", opts.Workspace, err)
	case !fi.IsDir():
		m.broken = fmt.Errorf("the workspace %s is not a folder; open a folder", opts.Workspace)
	}
	if m.broken == nil {
		root, err := os.OpenRoot(m.real)
		if err != nil {
			m.broken = fmt.Errorf("the workspace %s cannot be opened (%w); check its permissions", opts.Workspace, err)
		}
		m.root = root
	}
	m.env = sandbox.ConfineSearchPaths(opts.Env, sandbox.SearchPathVars, m.ws, m.real)
	seen := map[string]bool{}
	for _, sc := range opts.Servers {
		if sc.Name == "" || seen[sc.Name] {
			continue
		}
		seen[sc.Name] = true
		m.servers = append(m.servers, newServer(m, sc))
	}
	return m
}

// Workspace returns the workspace's absolute path with its symlinks
// resolved, the root that workspace-relative paths are relative to.
func (m *Manager) Workspace() string { return m.real }

// notifyLocked wakes every waiter of the manager; the caller holds m.mu.
func (m *Manager) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// notify wakes every waiter of the manager.
func (m *Manager) notify() {
	m.mu.Lock()
	m.notifyLocked()
	m.mu.Unlock()
}

// isClosed reports whether the last hold was released.
func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// usable returns why the manager cannot be used, or nil.
func (m *Manager) usable() error {
	if m.broken != nil {
		return m.broken
	}
	if m.isClosed() {
		return errors.New("the language servers of this workspace were released; acquire the manager again")
	}
	return nil
}

// close stops every server, in parallel, and closes the manager.
func (m *Manager) close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.notifyLocked()
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop()
		}()
	}
	wg.Wait()
	if m.root != nil {
		m.root.Close()
	}
}

// Status returns the state of every configured server, in configuration
// order.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// Available returns the configured servers whose command is found and
// whose extensions occur in the workspace, in configuration order. The
// workspace scan is bounded (at most scanFiles entries, scanDepth folders
// deep, skipping .git, node_modules, vendor and other hidden or generated
// folders) and its result is reused for a few seconds.
func (m *Manager) Available() []ServerConfig {
	if m.usable() != nil {
		return nil
	}
	exts := m.extensions()
	var out []ServerConfig
	for _, s := range m.servers {
		if !s.installed() {
			continue
		}
		if slices.ContainsFunc(s.cfg.Extensions, func(e string) bool { return exts[e] }) {
			out = append(out, s.cfg)
		}
	}
	return out
}

// Limits of the workspace scan of Available.
const (
	scanFiles = 5000
	scanDepth = 6
	scanTTL   = 10 * time.Second
)

// skipDirs are folders the scan never enters.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true,
	"__pycache__": true, "venv": true, "bower_components": true,
}

// extensions returns the set of file extensions (and multi-part endings
// such as ".d.ts" reduce to their last part) the scan found.
func (m *Manager) extensions() map[string]bool {
	m.mu.Lock()
	if m.scanExt != nil && time.Since(m.scanAt) < scanTTL {
		defer m.mu.Unlock()
		return m.scanExt
	}
	m.mu.Unlock()
	exts := map[string]bool{}
	n := 0
	_ = fs.WalkDir(m.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > scanFiles {
			return fs.SkipAll
		}
		if d.IsDir() {
			if p == "." {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || skipDirs[name] || strings.Count(p, "/") >= scanDepth {
				return fs.SkipDir
			}
			return nil
		}
		if e := filepath.Ext(d.Name()); e != "" {
			exts[e] = true
		}
		return nil
	})
	m.mu.Lock()
	m.scanExt, m.scanAt = exts, time.Now()
	m.mu.Unlock()
	return exts
}

// rel returns the workspace-relative, slash-separated form of path
// (absolute, or relative to the workspace), refusing one outside it.
func (m *Manager) rel(path string) (string, error) {
	if path == "" {
		return "", errors.New("no path was given; give a file path relative to the workspace")
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.real, p)
	}
	p = filepath.Clean(p)
	if rel, ok := m.relOf(p); ok {
		return rel, nil
	}
	return "", fmt.Errorf("the path %q is outside the workspace %s; give a path inside it", path, m.ws)
}

// relOf returns the workspace-relative form of the absolute path p, and
// whether it is inside the workspace (as given or resolved).
func (m *Manager) relOf(p string) (string, bool) {
	for _, root := range []string{m.real, m.ws} {
		if r, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(r) {
			return filepath.ToSlash(r), true
		}
	}
	return "", false
}

// abs returns the absolute path servers know the workspace file rel by.
func (m *Manager) abs(rel string) string {
	return filepath.Join(m.real, filepath.FromSlash(rel))
}

// serversFor returns the servers handling the file rel, in order.
func (m *Manager) serversFor(rel string) []*server {
	var out []*server
	for _, s := range m.servers {
		if s.cfg.handles(rel) {
			out = append(out, s)
		}
	}
	return out
}

// envValue returns the last value of name in env, "" when unset.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// setEnv returns env with the entries of extra ("NAME=value") replacing
// those of the same name.
func setEnv(env, extra []string) []string {
	out := slices.Clone(env)
	for _, kv := range extra {
		name, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		out = append(out, kv)
	}
	return out
}

// Start starts the available servers (see [Manager.Available]) that are
// not started yet, without syncing a file, and waits until each is
// running or failed, at most StartTimeout and never past ctx; it returns
// their statuses. A caller may use it when a session opens, so the first
// diagnostics do not wait for a server to start.
func (m *Manager) Start(ctx context.Context) []ServerStatus {
	if m.usable() != nil {
		return nil
	}
	var started []*server
	for _, sc := range m.Available() {
		for _, s := range m.servers {
			if s.cfg.Name == sc.Name {
				s.ensure()
				started = append(started, s)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	var out []ServerStatus
	for _, s := range started {
		_, _ = s.connFor(ctx, "")
		out = append(out, s.status())
	}
	return out
}
