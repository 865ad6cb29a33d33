package lsp

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tally-dev/tally/internal/sandbox"
)

func TestConfineWrapsEveryStart(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.fake": "BAD\n"})
	var calls atomic.Int32
	m := acquire(t, dir, Options{
		Servers: []ServerConfig{fakeConfig(t, "fake", "ok", ".fake")},
		Confine: func(c *exec.Cmd) (*exec.Cmd, error) {
			calls.Add(1)
			if c.Dir != m0(dir) || c.Stdin == nil || c.Stdout == nil {
				return nil, errors.New("unexpected command")
			}
			return c, nil
		},
	})
	if set, rep := m.Diagnostics(context.Background(), "a.fake"); len(set) != 1 {
		t.Fatalf("diagnostics %+v %+v", set, rep)
	}
	if calls.Load() != 1 {
		t.Errorf("Confine called %d times", calls.Load())
	}

	refused := acquire(t, t.TempDir(), Options{
		Servers: []ServerConfig{fakeConfig(t, "fake", "ok", ".fake")},
		Confine: func(*exec.Cmd) (*exec.Cmd, error) { return nil, errors.New("no sandbox here") },
	})
	writeFiles(t, refused.Workspace(), map[string]string{"b.fake": "x\n"})
	_, rep := refused.Diagnostics(context.Background(), "b.fake")
	st := refused.Status()[0]
	if st.State != StateFailed || !strings.Contains(st.Reason, "cannot start in the sandbox (no sandbox here)") || len(rep.Notes) != 1 {
		t.Errorf("status %+v, report %+v", st, rep)
	}
}

// m0 is the workspace as the manager resolves it.
func m0(dir string) string { return workspaceKey(dir) }

// TestServersInTheSandbox runs the fake server and, when installed,
// gopls through sandbox.Wrap, as the agent does.
func TestServersInTheSandbox(t *testing.T) {
	if ok, why := sandbox.Available(); !ok {
		t.Skipf("the sandbox is not available here (%s)", why)
	}
	servers := []ServerConfig{fakeConfig(t, "fake", "ok", ".fake")}
	files := map[string]string{"a.fake": "BAD\n"}
	gopls := ""
	if p := findServerOrEmpty(t, "gopls"); p != "" {
		gopls = p
		servers = append(servers, serverConfig(t, "gopls", p))
		files["go.mod"] = "module example.com/demo\n\ngo 1.22\n"
		files["main.go"] = "package main\n\nfunc main() {\n\tvar x int = \"s\"\n\t_ = x\n}\n"
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	cache := t.TempDir()
	m := acquire(t, dir, Options{
		Servers: servers, Settle: 30 * time.Second, StartTimeout: 40 * time.Second,
		Confine: func(c *exec.Cmd) (*exec.Cmd, error) {
			// What tool.ConfineProgram gives commands (TMPDIR, GOCACHE), and
			// the one folder gopls needs beyond it, its file cache.
			c.Env = append(c.Env, "TMPDIR="+cache, "GOCACHE="+cache+"/go", "GOPLSCACHE="+cache+"/gopls")
			return sandbox.Wrap(c, sandbox.Policy{Workspace: workspaceKey(dir), Writable: []string{cache}, Require: true})
		},
	})
	paths := []string{"a.fake"}
	if gopls != "" {
		paths = append(paths, "main.go")
	}
	set, rep := m.Diagnostics(context.Background(), paths...)
	if len(rep.Late) > 0 || len(set["a.fake"]) != 1 {
		t.Fatalf("diagnostics %+v, report %+v", set, rep)
	}
	if gopls != "" && (len(set["main.go"]) != 1 || set["main.go"][0].Line != 4) {
		t.Errorf("gopls in the sandbox: %+v", set["main.go"])
	}
}

// findServerOrEmpty is findServer without the skip.
func findServerOrEmpty(t *testing.T, program string) string {
	var p string
	t.Run("find-"+program, func(t *testing.T) { p = findServer(t, program) })
	return p
}
