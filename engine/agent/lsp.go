package agent

import (
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/tool"
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
	s.lsp = lsp.Open(lsp.SessionOptions{
		Workspace: s.meta.Workspace, Servers: o.Servers, LogDir: logDir, Settle: o.Settle, TempDir: confineEnv.TempDir,
		Confine: func(c *exec.Cmd, readable string) (*exec.Cmd, error) {
			return tool.ConfineProgram(&confineEnv, c, readable)
		},
	})
	for _, t := range s.lsp.Tools() {
		s.tools.AddBuiltin(t)
	}
}

// LanguageServers returns the session's share of its workspace's language
// servers: their state and the current diagnostics of files (nil, with
// none, when no server is available or they are off).
func (s *Session) LanguageServers() *lsp.Session { return s.lsp }
