package agent

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/storage"
)

// ShellConfig is what the host allows commands: the settings' extra
// environment variables, build caches and secret-file list.
type ShellConfig struct {
	// Env names extra environment variables commands receive on top of
	// the built-in allow-list; secret-looking names never pass.
	Env []string
	// CacheDirs are folders shared with the user's own builds that
	// sandboxed commands may write too; nil means none (they get private
	// build caches, see sandbox.PrivateCaches).
	CacheDirs []string
	// SecretFiles is the secret-file deny list; nil means the default.
	SecretFiles []string
	// FetchLocal lets web_fetch reach loopback and link-local addresses.
	FetchLocal bool
}

// setup builds the session's gate and tool environment from the
// host's config and the session's stored mode and network switch. A mode
// given in the config replaces the stored one. The gate checks commands
// against the workspace's stored command rules and the config's own.
func (h Permissions) setup() error {
	s := h.s
	cfg := s.cfg
	s.gate = tool.NewGate(namingAsker(s.subs, cfg.Approver))
	ok, _ := sandbox.Available()
	s.gate.SetSandboxed(ok)
	if cfg.Mode != "" {
		s.st.Mode = cfg.Mode
	}
	mode, err := tool.ParseMode(string(s.st.Mode))
	if err != nil {
		return fmt.Errorf("session %q: %w", s.meta.ID, err)
	}
	if err := s.gate.SetMode(mode); err != nil {
		return fmt.Errorf("%w", err)
	}
	s.st.Mode = mode
	if s.cmds, err = cmdrule.Open(cfg.Store, s.meta.Workspace, cfg.AllowCommands, cfg.DenyCommands); err != nil {
		return err
	}
	s.gate.SetCommandRules(s.cmds.Set)
	caches := cfg.Shell.CacheDirs
	s.env = tool.Env{
		Workspace: s.meta.Workspace, Roots: s.st.Roots, ShellTimeout: cfg.ShellTimeout,
		SecretFiles: cfg.Shell.SecretFiles, ShellEnv: cfg.Shell.Env, CacheDirs: caches, FetchLocal: cfg.Shell.FetchLocal,
		// Where the sandbox works, a command never runs without it: a
		// failure to apply it refuses the command instead of a silent
		// downgrade. Where it does not, every command asks (see Gate).
		AllowNetwork: s.st.AllowNetwork, RequireSandbox: ok,
		Editor: cfg.Editor,
	}
	if cfg.Store != nil && cfg.Store.Path() != "" {
		// The store holds every session and, without a keychain, the key.
		s.env.Private = []string{filepath.Dir(cfg.Store.Path())}
	}
	root := cfg.TempRoot
	if root == "" {
		root = sandbox.DefaultTempRoot()
	}
	if dir, err := sandbox.SessionTempDir(root, s.meta.ID); err == nil {
		// A fresh temp dir each time the session is opened: no command of
		// an earlier run is alive (they die with Tally), so none uses it.
		os.RemoveAll(dir)
		if dir, err = sandbox.SessionTempDir(root, s.meta.ID); err == nil {
			s.env.TempDir = dir
		}
	}
	return nil
}

// Mode returns the session's permission mode.
func (h Permissions) Mode() tool.Mode { return h.s.gate.Mode() }

// SetMode switches the session's permission mode; full-auto is refused
// where commands cannot be sandboxed. The new mode decides the next call
// at once, even inside a running turn; storing it waits for that turn to
// end, so call it off the UI goroutine.
func (h Permissions) SetMode(m tool.Mode) error {
	s := h.s
	if err := s.gate.SetMode(m); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Mode = m
	return s.saveMeta()
}

// AllowNetwork reports whether this session's commands may open network
// connections.
func (h Permissions) AllowNetwork() bool {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.env.AllowNetwork
}

// SetAllowNetwork turns the session's "allow network" switch and stores
// it. It waits for a running turn.
func (h Permissions) SetAllowNetwork(on bool) error {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.AllowNetwork = on
	s.env.AllowNetwork = on
	return s.saveMeta()
}

// Sandboxed reports whether this session's commands run inside the
// sandbox (where it is available they always do).
func (h Permissions) Sandboxed() bool { return h.s.env.RequireSandbox }

// Rules returns the tools the user allowed always in this session.
func (h Permissions) Rules() []string { return h.s.gate.Rules() }

// Revoke withdraws the "always allow" rule of a tool.
func (h Permissions) Revoke(name string) { h.s.gate.Revoke(name) }

// SandboxNote describes how this session's commands run, such as
// "sandboxed: …; network blocked" or "not sandboxed".
func (h Permissions) SandboxNote() string {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return tool.ShellSandboxNote(&s.env)
}

// saveMeta stores the session's state; the caller holds s.mu.
func (s *Session) saveMeta() error {
	return s.cfg.Store.Update(func(tx *storage.Tx) error { return putMeta(tx, s.meta, s.st) })
}

// CommandRules lists the run_shell command rules in force for this
// session (cmdrule.Book.List).
func (h Permissions) CommandRules() ([]cmdrule.InForce, error) { return h.s.cmds.List() }

// AllowCommand stores an allow rule for every session of the workspace
// (cmdrule.Book.Allow). It writes the store; call it off the UI goroutine.
func (h Permissions) AllowCommand(pattern string) error { return h.s.cmds.Allow(pattern) }

// DenyCommand stores a deny rule for every session of the workspace
// (cmdrule.Book.Deny). It writes the store; call it off the UI goroutine.
func (h Permissions) DenyCommand(pattern string) error { return h.s.cmds.Deny(pattern) }

// RevokeCommand withdraws a command rule of the workspace or of this
// session (cmdrule.Book.Revoke). It writes the store; call it off the UI
// goroutine.
func (h Permissions) RevokeCommand(pattern string) error { return h.s.cmds.Revoke(pattern) }
