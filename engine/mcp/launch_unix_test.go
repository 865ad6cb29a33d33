//go:build unix

package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

// evilScript writes a shell script at path that leaves marker behind and
// fails, standing for code a repository ships.
func evilScript(t *testing.T, path, marker string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho ran > '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A user's server named by a bare command ran the repository's program of
// that name when Tally's PATH held a workspace folder (or "."), and it
// started in the workspace with the workspace on its search paths.
func TestUserMCPServerDoesNotRunWorkspaceCode(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	evilScript(t, filepath.Join(ws, "node_modules", ".bin", "tally-mcp-test"), marker)
	evilScript(t, filepath.Join(ws, "tally-mcp-test"), marker)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "tally-mcp-test")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws) // so "." and "" in PATH mean the workspace, as when run from it
	t.Setenv("PATH", strings.Join([]string{filepath.Join(ws, "node_modules", ".bin"), ".", "", bin, os.Getenv("PATH")}, ":"))
	t.Setenv("PYTHONPATH", ws+":.:/opt/py")
	t.Setenv("NODE_PATH", filepath.Join(ws, "node_modules"))

	conf := filepath.Join(t.TempDir(), "tally", FileName)
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	user := ServerConfig{Command: "tally-mcp-test", Env: map[string]string{serverEnv: "where"}, Source: conf}
	bare := user
	bare.Source = "" // no configuration file: an empty folder Tally owns
	m := newManager(t, map[string]ServerConfig{"user": user, "bare": bare}, Options{Dir: ws})
	m.Start(context.Background())
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the user's server ran a program from the workspace")
	}
	for name, wantDir := range map[string]string{"user": filepath.Dir(conf), "bare": ""} {
		out, isErr := run(t, m, "mcp__"+name+"__where", `{}`)
		if isErr {
			t.Fatalf("%s: %s", name, out)
		}
		lines := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			k, v, _ := strings.Cut(l, "=")
			lines[k] = v
		}
		if sandbox.Within(lines["cwd"], ws) || (wantDir != "" && lines["cwd"] != wantDir) {
			t.Errorf("%s: the server started in %s; want %q, outside the workspace", name, lines["cwd"], wantDir)
		}
		for _, v := range []string{"PATH", "PYTHONPATH", "NODE_PATH"} {
			for _, e := range strings.Split(lines[v], ":") {
				if lines[v] != "" && (e == "" || !filepath.IsAbs(e) || sandbox.Within(e, ws)) {
					t.Errorf("%s: %s holds %q: %s", name, v, e, lines[v])
				}
			}
		}
		if lines["PYTHONPATH"] != "/opt/py" || lines["NODE_PATH"] != "" {
			t.Errorf("%s: PYTHONPATH=%q NODE_PATH=%q; want /opt/py and none", name, lines["PYTHONPATH"], lines["NODE_PATH"])
		}
	}
	// The workspace's own servers still start in the workspace.
	wsServer := ServerConfig{Command: exe, Env: map[string]string{serverEnv: "where"}, Workspace: true}
	wm := newManager(t, map[string]ServerConfig{"repo": wsServer}, Options{Dir: ws})
	if out, _ := run(t, connected(t, wm, "repo"), "mcp__repo__where", `{}`); !strings.Contains(out, "cwd="+ws+"\n") {
		t.Errorf("the workspace's server did not start in the workspace:\n%s", out)
	}
}

func connected(t *testing.T, m *Manager, name string) *Manager {
	t.Helper()
	if err := m.Connect(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	return m
}

// `tally mcp add x -- python3 -m some_server` imported the module of that
// name the repository ships, since the server started in the workspace.
func TestUserMCPServerDoesNotImportWorkspaceModule(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "pass").Run() != nil {
		t.Skip("python3 is not available")
	}
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	mod := "import pathlib\npathlib.Path(" + pyQuote(marker) + ").write_text('ran')\n"
	if err := os.WriteFile(filepath.Join(ws, "tally_evil_server.py"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	m := newManager(t, map[string]ServerConfig{"py": {Command: "python3", Args: []string{"-m", "tally_evil_server"}}}, Options{Dir: ws})
	_ = m.Connect(context.Background(), "py")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the user's python3 -m server imported the workspace's module")
	}
	if st := status(t, m, "py"); st.State != StateFailed {
		t.Errorf("status = %+v; want failed (no such module outside the workspace)", st)
	}
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
