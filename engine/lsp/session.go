package lsp

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// MaxDiagnostics caps the diagnostics lines one edit round adds for the
// model; the rest are counted in one line.
const MaxDiagnostics = 30

// baselineWait bounds the look at a file's diagnostics before an edit.
const baselineWait = 2 * time.Second

// SessionOptions say how a session reaches its workspace's servers.
type SessionOptions struct {
	// Workspace, Servers, LogDir and Settle are the Options of Acquire.
	Workspace string
	Servers   []ServerConfig
	LogDir    string
	Settle    time.Duration
	// TempDir is the session's temporary folder, where gopls keeps its
	// file cache ("" leaves it where gopls puts it).
	TempDir string
	// Confine wraps a server's command in the session's sandbox, with
	// readable the folder the program's installation needs to read.
	Confine func(c *exec.Cmd, readable string) (*exec.Cmd, error)
}

// Session is one session's share of its workspace's language servers:
// the servers available when it opened and the diagnostics of the files
// being edited. Its methods work on a nil *Session, which has no server;
// BeforeEdit, Touched and Diagnose are called by one turn at a time.
type Session struct {
	mgr      *Manager
	release  func()
	servers  []ServerConfig // the available ones, as the catalog was made
	baseline Set            // diagnostics of the files being edited, before the edit
}

// Open acquires the workspace's servers for a session; it returns nil
// when none is available for the workspace.
func Open(o SessionOptions) *Session {
	mgr, release := Acquire(Options{
		Workspace: o.Workspace, Servers: o.Servers, LogDir: o.LogDir, Settle: o.Settle,
		Confine: func(c *exec.Cmd) (*exec.Cmd, error) {
			if o.TempDir != "" { // gopls keeps its file cache where it may write
				c.Env = append(c.Env, "GOPLSCACHE="+filepath.Join(o.TempDir, "gopls"))
			}
			return o.Confine(c, InstallRoot(c.Path))
		},
	})
	servers := mgr.Available()
	if len(servers) == 0 {
		release()
		return nil
	}
	return &Session{mgr: mgr, release: release, servers: servers, baseline: Set{}}
}

// Tools are the navigation tools over the session's servers; none
// without a server.
func (l *Session) Tools() []tool.Tool {
	if l == nil {
		return nil
	}
	return Tools(l.mgr)
}

// Close gives the session's share of the servers back; the last session
// of the workspace stops them.
func (l *Session) Close() {
	if l != nil && l.release != nil {
		l.release()
		l.release = nil
	}
}

// InstallRoot is the folder a server's program needs to read besides the
// system and toolchain ones: the node_modules holding a Node server (its
// packages require their siblings), else the program's own folder and,
// for a bin folder, the one above it.
func InstallRoot(program string) string {
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

// covered reports whether an available server handles path. The
// workspace's servers cover none of a session's additional folders,
// whose files the tools show by absolute path.
func (l *Session) covered(path string) bool {
	if l == nil {
		return false
	}
	if rel, err := filepath.Rel(l.mgr.Workspace(), path); filepath.IsAbs(path) && (err != nil || !filepath.IsLocal(rel)) {
		return false
	}
	ext := strings.ToLower(filepath.Ext(path))
	return slices.ContainsFunc(l.servers, func(c ServerConfig) bool { return slices.Contains(c.Extensions, ext) })
}

// BeforeEdit records the diagnostics of the file an edit_file or
// write_file call is about to change, so the round reports only what the
// edit added. The look is bounded; a server still starting gives none.
func (l *Session) BeforeEdit(ctx context.Context, call transcript.ToolCall, args string) {
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

// Touched tells the servers about files a call read, so they are open
// and checked before the agent edits them; it never waits.
func (l *Session) Touched(call transcript.ToolCall, res tool.Result) {
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

// Diagnose asks the servers for the diagnostics of the files the round
// wrote and returns what the edits added, rendered for the model ("" when
// nothing new), with the paths no server covers left to the file-type
// checks.
func (l *Session) Diagnose(ctx context.Context, paths []string) (text string, rest []string) {
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
	fresh := NewIn(l.baseline, after)
	l.baseline = Set{}
	body := Render(fresh, MaxDiagnostics)
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
func (l *Session) Status() []ServerStatus {
	if l != nil {
		return l.mgr.Status()
	}
	return nil
}

// Diagnostics returns the current errors and warnings of paths (relative
// to the workspace) from the servers that handle them, waiting a bounded
// time for them to settle (see Manager.Diagnostics); none when no
// server covers them.
func (l *Session) Diagnostics(ctx context.Context, paths ...string) (Set, Report) {
	if l == nil {
		return Set{}, Report{}
	}
	var covered []string
	for _, p := range paths {
		if l.covered(p) {
			covered = append(covered, p)
		}
	}
	if len(covered) == 0 {
		return Set{}, Report{}
	}
	return l.mgr.Diagnostics(ctx, covered...)
}
