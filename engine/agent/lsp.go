package agent

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// LSPConfig configures the workspace's language servers (engine/lsp): the
// diagnostics after every edit and the navigation tools. The zero value
// uses the default servers that are installed.
type LSPConfig struct {
	// Off starts no language server: diagnostics fall back to the
	// file-type checks (gofmt, go vet) and the navigation tools are not
	// offered.
	Off bool
	// Servers are the configured servers (nil means lsp.Defaults; the
	// workbench passes the user's lsp.json merged over them).
	Servers []lsp.ServerConfig
	// LogDir receives the servers' logs ("" means <data dir>/lsp).
	LogDir string
	// Settle bounds the wait for diagnostics after an edit (0 means
	// lsp.DefaultSettle).
	Settle time.Duration
}

// MaxLSPDiagnostics caps the diagnostics lines one edit round adds for the
// model; the rest are counted in one line.
const MaxLSPDiagnostics = 30

// baselineWait bounds the look at a file's diagnostics before an edit.
const baselineWait = 2 * time.Second

// lspState is the session's share of its workspace's language servers.
type lspState struct {
	mgr      *lsp.Manager
	release  func()
	servers  []lsp.ServerConfig // the available ones, as the catalog was made
	baseline lsp.Set            // diagnostics of the files being edited, before the edit
}

// startLSP acquires the workspace's language servers and offers the
// navigation tools when a server is available for a language of the
// workspace. It runs while the session loads, before the first request,
// so the tools are in the catalog from the start and never reshuffle it;
// no server starts until a file of its language is touched.
func (s *Session) startLSP() {
	o := s.cfg.LSP
	if o.Off {
		return
	}
	logDir := o.LogDir
	if logDir == "" && s.cfg.Store != nil && s.cfg.Store.Path() != "" {
		logDir = filepath.Join(filepath.Dir(s.cfg.Store.Path()), "lsp")
	}
	// Servers read the workspace's code and may run its build tools:
	// they run in the sandbox of the session's commands, as it stands now.
	confineEnv := s.env
	mgr, release := lsp.Acquire(lsp.Options{
		Workspace: s.meta.Workspace, Servers: o.Servers, LogDir: logDir, Settle: o.Settle,
		Confine: func(c *exec.Cmd) (*exec.Cmd, error) {
			if confineEnv.TempDir != "" { // gopls keeps its file cache where it may write
				c.Env = append(c.Env, "GOPLSCACHE="+filepath.Join(confineEnv.TempDir, "gopls"))
			}
			return tool.ConfineProgram(&confineEnv, c, installRoot(c.Path))
		},
	})
	servers := mgr.Available()
	if len(servers) == 0 {
		release()
		return
	}
	s.lsp = &lspState{mgr: mgr, release: release, servers: servers, baseline: lsp.Set{}}
	for _, t := range lsp.Tools(mgr) {
		s.tools.AddBuiltin(t)
	}
}

// installRoot is the folder a server's program needs to read besides the
// system and toolchain ones: the node_modules holding a Node server (its
// packages require their siblings), else the program's own folder and,
// for a bin folder, the one above it.
func installRoot(program string) string {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		real = program
	}
	for dir := filepath.Dir(real); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if filepath.Base(dir) == "node_modules" {
			return dir
		}
	}
	if dir := filepath.Dir(real); filepath.Base(dir) == "bin" {
		return filepath.Dir(dir)
	}
	return filepath.Dir(real)
}

// closeLSP gives the session's share of the servers back; the last
// session of the workspace stops them.
func (s *Session) closeLSP() {
	if l := s.lsp; l != nil && l.release != nil {
		l.release()
		l.release = nil
	}
}

// covered reports whether an available server handles path.
func (l *lspState) covered(path string) bool {
	if l == nil {
		return false
	}
	ext := strings.ToLower(filepath.Ext(path))
	return slices.ContainsFunc(l.servers, func(c lsp.ServerConfig) bool { return slices.Contains(c.Extensions, ext) })
}

// beforeEdit records the diagnostics of the file an edit_file or
// write_file call is about to change, so the round reports only what the
// edit added. The look is bounded; a server still starting gives none.
func (l *lspState) beforeEdit(ctx context.Context, call transcript.ToolCall, args string) {
	if l == nil || (call.Name != "edit_file" && call.Name != "write_file") {
		return
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || a.Path == "" || !l.covered(a.Path) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, baselineWait)
	defer cancel()
	set, _ := l.mgr.Diagnostics(ctx, a.Path)
	for p, ds := range set {
		if _, seen := l.baseline[p]; !seen {
			l.baseline[p] = ds
		}
	}
}

// touched tells the servers about files a call read, so they are open
// and checked before the agent edits them; it never waits.
func (l *lspState) touched(call transcript.ToolCall, res tool.Result) {
	if l == nil || res.IsError || call.Name != "read_file" {
		return
	}
	var paths []string
	for _, p := range res.Paths {
		if l.covered(p) {
			paths = append(paths, p)
		}
	}
	if len(paths) > 0 {
		_ = l.mgr.Sync(context.Background(), paths...)
	}
}

// diagnose asks the servers for the diagnostics of the files the round
// wrote and returns what the edits added, rendered for the model ("" when
// nothing new), with the paths no server covers left to the file-type
// checks.
func (l *lspState) diagnose(ctx context.Context, paths []string) (text string, rest []string) {
	if l == nil {
		return "", paths
	}
	var covered []string
	for _, p := range paths {
		if l.covered(p) {
			covered = append(covered, p)
		} else {
			rest = append(rest, p)
		}
	}
	if len(covered) == 0 {
		return "", rest
	}
	after, rep := l.mgr.Diagnostics(ctx, covered...)
	fresh := lsp.NewIn(l.baseline, after)
	l.baseline = lsp.Set{}
	body := lsp.Render(fresh, MaxLSPDiagnostics)
	var notes []string
	if len(rep.Late) > 0 {
		notes = append(notes, "not settled within "+rep.Waited.Round(100*time.Millisecond).String()+": "+strings.Join(rep.Late, ", ")+" (their diagnostics may be incomplete)")
	}
	if body == "" && len(notes) == 0 {
		return "", rest
	}
	var b strings.Builder
	b.WriteString("<diagnostics>\n")
	if body == "" {
		b.WriteString("no new errors or warnings in the edited files\n")
	} else {
		b.WriteString("new in the edited files:\n")
		b.WriteString(transcript.Neutralize(body))
	}
	for _, n := range notes {
		b.WriteString(transcript.NeutralizeLine(n) + "\n")
	}
	b.WriteString("</diagnostics>")
	return b.String(), rest
}

// Status is the state of every configured server of the workspace, nil
// when the session has none available (or they are off). It never waits.
func (h LanguageServers) Status() []lsp.ServerStatus {
	if l := h.s.lsp; l != nil {
		return l.mgr.Status()
	}
	return nil
}

// Diagnostics returns the current errors and warnings of paths (relative
// to the workspace) from the servers that handle them, waiting a bounded
// time for them to settle (see lsp.Manager.Diagnostics); none when no
// server covers them. It does not take the session lock, so it may run
// while a turn does.
func (h LanguageServers) Diagnostics(ctx context.Context, paths ...string) (lsp.Set, lsp.Report) {
	l := h.s.lsp
	if l == nil {
		return lsp.Set{}, lsp.Report{}
	}
	var covered []string
	for _, p := range paths {
		if l.covered(p) {
			covered = append(covered, p)
		}
	}
	if len(covered) == 0 {
		return lsp.Set{}, lsp.Report{}
	}
	return l.mgr.Diagnostics(ctx, covered...)
}
