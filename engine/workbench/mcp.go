package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/trust"
	"github.com/tally-dev/tally/storage"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/tokens"
)

// The front door of the MCP settings: the user's servers (in the user's
// mcp.json, see mcp.UserPath), a workspace's servers (its .tally/mcp.json,
// used only once the user trusted its exact content) and a probe that
// connects a server and lists its tools. Sessions read the same files when
// they are created or opened (see agent.MCPOptions). What needs only the
// user's file is a function, usable while another Tally holds the store;
// what reads the trust in the store is a method.

// Where an MCP server is configured (MCPServer.Source).
const (
	MCPSourceUser      = "user"
	MCPSourceWorkspace = "workspace"
)

// MCPServer is one configured MCP server, for the settings page and
// `tally mcp list`.
type MCPServer struct {
	Name string
	// Source is MCPSourceUser or MCPSourceWorkspace; Path is the file.
	Source, Path string
	Config       mcp.ServerConfig
	// Enabled: the server runs in sessions opened from now on (not
	// disabled, trusted, and not shadowed).
	Enabled bool
	// Trusted is false for a workspace server whose file is not trusted.
	Trusted bool
	// Shadowed is set for a workspace server with the name of one of the
	// user's: the user's server is used.
	Shadowed bool
	// Status is the server's state in the session given to MCPServers,
	// or idle (disabled) without one.
	Status mcp.ServerStatus
	// SignedIn is set for an HTTP server whose OAuth sign-in is kept.
	SignedIn bool
}

// MCPServers lists the user's servers, then the workspace ws's ("" for
// none), each sorted by name, with their state in the live session sess
// (nil for none).
func (w *Workbench) MCPServers(ws string, sess *agent.Session) ([]MCPServer, error) {
	path, err := mcp.UserPath()
	if err != nil {
		return nil, err
	}
	user, err := mcp.LoadFile(path)
	if err != nil {
		return nil, err
	}
	live := map[string]mcp.ServerStatus{}
	if sess != nil {
		for _, st := range sess.MCP().Status().Servers {
			live[st.Name] = st
		}
	}
	var out []MCPServer
	add := func(name, source, path string, sc mcp.ServerConfig, trusted, shadowed bool) {
		s := MCPServer{Name: name, Source: source, Path: path, Config: sc, Trusted: trusted, Shadowed: shadowed,
			Enabled: !sc.Disabled && trusted && !shadowed}
		s.Status = mcp.ServerStatus{Name: name, State: mcp.StateIdle, Source: path}
		if !s.Enabled {
			s.Status.State = mcp.StateDisabled
		}
		if st, ok := live[name]; ok && !shadowed && s.Enabled {
			s.Status = st
		}
		if sc.Kind() != mcp.TypeStdio {
			s.SignedIn = MCPSignedIn(name, sc)
		}
		out = append(out, s)
	}
	for _, name := range user.Names() {
		add(name, MCPSourceUser, path, user.Servers[name], true, false)
	}
	if ws == "" {
		return out, nil
	}
	wf, err := w.MCPWorkspaceFile(ws)
	if err != nil || wf.Path == "" {
		return out, err
	}
	for _, name := range wf.Preview.Names() {
		_, shadowed := user.Servers[name]
		add(name, MCPSourceWorkspace, wf.Path, wf.Preview.Servers[name], !wf.NeedsTrust, shadowed)
	}
	return out, nil
}

// MCPWorkspaceFile describes the MCP file of workspace ws for the trust
// prompt: its path and hash ("" when there is none), whether it needs
// the user's trust, and the servers it would run (Preview).
func (w *Workbench) MCPWorkspaceFile(ws string) (mcp.WorkspaceFile, error) {
	_, wf, err := mcp.LoadWorkspace(ws, w.mcpTrusted(ws))
	return wf, err
}

func (w *Workbench) mcpTrusted(ws string) func(string) bool {
	return func(hash string) bool {
		h, err := trust.Get(w.store, trust.MCP, ws)
		return err == nil && h != "" && h == hash
	}
}

// TrustMCP trusts the MCP file of workspace ws with content hash (the
// Hash MCPWorkspaceFile returned, which the user reviewed): its servers
// run in sessions opened from now on, until the file changes.
func (w *Workbench) TrustMCP(ws, hash string) error {
	wf, err := w.MCPWorkspaceFile(ws)
	if err != nil {
		return err
	}
	switch {
	case wf.Path == "":
		return fmt.Errorf("%s has no MCP file (%s) to trust", ws, mcp.WorkspacePath(ws))
	case hash == "" || wf.Hash != hash:
		return fmt.Errorf("%s changed since it was reviewed; review it again before trusting it", wf.Path)
	}
	return trust.Put(w.store, trust.MCP, ws, hash)
}

// UntrustMCP withdraws the trust in workspace ws's MCP file.
func (w *Workbench) UntrustMCP(ws string) error { return trust.Put(w.store, trust.MCP, ws, "") }

// MCPUserPath is the user's MCP file, where SaveMCPServer writes.
func MCPUserPath() (string, error) { return mcp.UserPath() }

// updateUserMCP applies change to the user's MCP file and saves it.
func updateUserMCP(change func(*mcp.Config, string) error) error {
	path, err := mcp.UserPath()
	if err != nil {
		return err
	}
	cfg, err := mcp.LoadFile(path)
	if err != nil {
		return err
	}
	if cfg.Servers == nil {
		cfg.Servers = map[string]mcp.ServerConfig{}
	}
	if err := change(&cfg, path); err != nil {
		return err
	}
	return mcp.Save(path, cfg)
}

// SaveMCPServer adds the server name to the user's MCP file, or replaces
// the one of that name, after validating it. Sessions opened from now on
// run it.
func SaveMCPServer(name string, sc mcp.ServerConfig) error {
	return updateUserMCP(func(c *mcp.Config, _ string) error { return c.Set(name, sc) })
}

// ErrNoMCPServer is matched (errors.Is) by the error of RemoveMCPServer
// and EnableMCPServer for a name the user's MCP file does not have.
var ErrNoMCPServer = errors.New("no such MCP server")

type noServerError struct{ name, path string }

func (e noServerError) Error() string {
	return fmt.Sprintf("there is no MCP server %q in %s; `tally mcp list` shows the servers", e.name, e.path)
}
func (e noServerError) Is(target error) bool { return target == ErrNoMCPServer }

// RemoveMCPServer deletes the server name from the user's MCP file.
func RemoveMCPServer(name string) error {
	return updateUserMCP(func(c *mcp.Config, path string) error {
		if _, ok := c.Servers[name]; !ok {
			return noServerError{name, path}
		}
		c.Remove(name)
		return nil
	})
}

// EnableMCPServer enables or disables the server name of the user's MCP
// file; a disabled server stays in the file but is not started.
func EnableMCPServer(name string, enabled bool) error {
	return updateUserMCP(func(c *mcp.Config, path string) error {
		if _, ok := c.Servers[name]; !ok {
			return noServerError{name, path}
		}
		return c.SetDisabled(name, !enabled)
	})
}

// ProbeMCP starts the server sc under name (even a disabled one), in
// workspace ws ("" for the current folder), lists its tools and stops it:
// the settings' "test" button. The tools are sorted by name, each with
// the tokens its spec takes; the error says why the server failed, in one
// sentence.
func ProbeMCP(ctx context.Context, name string, sc mcp.ServerConfig, ws string) ([]mcp.ToolSummary, error) {
	opts, err := probeOptions(sc, ws)
	if err != nil {
		return nil, err
	}
	return mcp.Probe(ctx, name, sc, opts)
}

// CallMCP starts server name on its own, in ws, calls its tool toolName
// with args (a JSON object) and stops it, as ProbeMCP starts it: for
// `tally mcp call`, outside any session. elicit answers the forms the
// server asks for during the call (see mcp.Options.Elicit); nil declines
// them. An HTTP server that asks for a sign-in (or, for this tool, more
// scopes) signs in as SignInMCP does, with show telling the user the
// page; nil show makes it fail saying a sign-in is needed.
func CallMCP(ctx context.Context, name string, sc mcp.ServerConfig, ws, toolName string, args json.RawMessage, elicit func(context.Context, mcp.Form) (mcp.Reply, error), show func(url string)) (tool.Result, error) {
	opts, err := probeOptions(sc, ws)
	if err != nil {
		return tool.Result{}, err
	}
	opts.Elicit = elicit
	if show != nil {
		opts.Browse = signInPage(show)
	}
	return mcp.Call(ctx, name, sc, opts, toolName, args)
}

// probeOptions are the options a server runs with outside a session, in
// ws ("" for none).
func probeOptions(sc mcp.ServerConfig, ws string) (mcp.Options, error) {
	if ws != "" {
		if st, err := os.Stat(ws); err != nil || !st.IsDir() {
			return mcp.Options{}, fmt.Errorf("workspace %q is not a folder; pick the project folder to start the server in", ws)
		}
	}
	opts := mcp.Options{Dir: ws, Count: tokens.Count}
	if sc.Workspace {
		// A workspace's server is the repository's code: run only in
		// the command sandbox, with the network off and Tally's data out
		// of reach, and never where there is no sandbox.
		env := tool.Env{Workspace: ws, RequireSandbox: true}
		if p, err := storage.DefaultPath(); err == nil {
			env.Private = []string{filepath.Dir(p)}
		}
		opts.Confine = func(c *exec.Cmd) (*exec.Cmd, error) { return tool.ConfineProgram(&env, c) }
	}
	return opts, nil
}
