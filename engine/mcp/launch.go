package mcp

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tally-dev/tally/internal/sandbox"
)

// This file decides where and how a stdio server starts. A workspace is
// untrusted: the user's own servers must never run code a repository
// ships (a module "python3 -m x" imports from the working directory, a
// node_modules/.bin that npx finds there, a PATH entry inside it), and a
// workspace's servers run only the workspace code their trusted
// configuration names (see [TrustHash]).

// stdioCommand builds the command of a stdio server: its working folder,
// its environment with the workspace off every search path, and its
// program resolved on that PATH.
func (s *server) stdioCommand() (*exec.Cmd, error) {
	ws := s.m.opts.Dir
	dir, err := s.workDir()
	if err != nil {
		return nil, err
	}
	env, err := childEnv(os.Environ(), s.cfg.Env, s.cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("the MCP server %q cannot start: %w", s.name, err)
	}
	env = sandbox.ConfineSearchPaths(env, sandbox.SearchPathVars, ws)
	prog := s.cfg.Command
	if !strings.ContainsAny(prog, `/\`) {
		if prog, err = lookPath(prog, envValue(env, "PATH"), envValue(env, "PATHEXT")); err != nil {
			return nil, fmt.Errorf("the MCP server %q cannot start: %w", s.name, err)
		}
	} else if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	cmd := exec.Command(prog, s.cfg.Args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stderr = s.log
	return cmd, nil
}

// workDir is where the server starts: the workspace for the workspace's
// own servers; for the user's, the folder of their configuration file
// when it lies outside the workspace, otherwise an empty folder Tally owns.
func (s *server) workDir() (string, error) {
	ws := s.m.opts.Dir
	if s.cfg.Workspace {
		return ws, nil
	}
	if src := s.cfg.Source; filepath.IsAbs(src) {
		dir := filepath.Dir(src)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() && (ws == "" || !sandbox.Within(dir, ws)) {
			return dir, nil
		}
	}
	return s.m.neutralDir()
}

// neutralDir returns the manager's empty working folder for user servers
// without a configuration file, made on first use and removed by Close.
func (m *Manager) neutralDir() (string, error) {
	m.neutral.Do(func() {
		m.neutralPath, m.neutralErr = os.MkdirTemp("", "tally-mcp-")
	})
	if m.neutralErr != nil {
		return "", fmt.Errorf("an empty folder to start MCP servers in cannot be made (%w); check the temporary folder's permissions", m.neutralErr)
	}
	return m.neutralPath, nil
}

// neutralFolder is the lazily made empty folder of a manager.
type neutralFolder struct {
	neutral     sync.Once
	neutralPath string
	neutralErr  error
}

// removeNeutral deletes the empty folder, if one was made.
func (n *neutralFolder) removeNeutral() {
	n.neutral.Do(func() {}) // no folder is made after Close
	if n.neutralPath != "" {
		_ = os.RemoveAll(n.neutralPath)
	}
}

// envValue returns the value of name in env, "" when it is not set.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && (k == name || runtime.GOOS == "windows" && strings.EqualFold(k, name)) {
			return v
		}
	}
	return ""
}

// lookPath finds the program name in the folders of pathList (absolute
// ones only), trying the extensions of pathExt on Windows.
func lookPath(name, pathList, pathExt string) (string, error) {
	exts := []string{""}
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		exts = nil
		if pathExt == "" {
			pathExt = ".COM;.EXE;.BAT;.CMD"
		}
		for _, e := range strings.Split(pathExt, ";") {
			if e != "" {
				exts = append(exts, strings.ToLower(e))
			}
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && executable(fi.Mode()) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("the program %q is not on PATH outside the workspace; install it, or give its full path as the command", name)
}

func executable(m fs.FileMode) bool {
	return runtime.GOOS == "windows" || m&0o111 != 0
}
