package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// mcpUsage is the help of `tally mcp`.
const mcpUsage = `usage:
  tally mcp list [--probe] [--workspace DIR] [--json]   servers, their source and state; --probe lists their tools, prompts and resources
  tally mcp trust [--workspace DIR]                     run the servers of the workspace's .tally/mcp.json
  tally mcp untrust [--workspace DIR]                   stop trusting it
  tally mcp add NAME [--env K=V]... -- COMMAND [ARGS...] add a stdio server to your MCP file
  tally mcp add NAME --url URL [--header K=V]...        add a streamable HTTP server; for OAuth, optionally
      [--client-id ID [--client-secret S]] [--client-metadata-url URL] [--callback-port N] [--scope S]...
  tally mcp remove NAME | enable NAME | disable NAME
  tally mcp login NAME | logout NAME                    sign in to a server that asks for OAuth, or forget the sign-in
  tally mcp call NAME TOOL [JSON] [--workspace DIR] [--json] [--yes]  call one tool outside a session, to try a server;
      --yes accepts the defaults of a form the server asks for`

// cmdMCP runs `tally mcp SUBCOMMAND`.
func cmdMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("tally mcp: say what to do\n%s", mcpUsage)
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "list":
		return mcpList(rest, stdout, stderr)
	case "trust", "untrust":
		return mcpTrust(sub, rest, stdout)
	case "add":
		return mcpAdd(rest, stdout)
	case "remove", "enable", "disable":
		return mcpEdit(sub, rest, stdout)
	case "call":
		return mcpCall(rest, stdin, stdout, stderr)
	case "login", "logout":
		return mcpLogin(sub, rest, stdout)
	}
	return usagef("tally mcp: unknown subcommand %q\n%s", sub, mcpUsage)
}

// mcpFlags are the flags of the mcp subcommands.
type mcpFlags struct {
	data, workspace, url string
	probe, json, yes     bool
	env, headers         pairs
	timeout              float64
	args                 []string
	oauth                mcp.OAuthConfig
	scopes               list
	// served is set when the app runs the command for the command line
	// (see servedBy).
	served *served
}

// list collects a repeated flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, " ") }
func (l *list) Set(v string) error { *l = append(*l, strings.Fields(v)...); return nil }

// pairs collects repeated K=V flags.
type pairs map[string]string

func (p pairs) String() string { return "" }
func (p pairs) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", v)
	}
	p[strings.TrimSpace(k)] = val
	return nil
}

// parseMCP parses the flags of `tally mcp sub`; arguments after "--" are
// kept whole (the server's command line).
func parseMCP(sub string, args []string) (*mcpFlags, error) {
	f := &mcpFlags{env: pairs{}, headers: pairs{}}
	fs := flag.NewFlagSet("mcp "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.data, "data", "", "")
	fs.StringVar(&f.workspace, "workspace", "", "")
	fs.StringVar(&f.url, "url", "", "")
	fs.BoolVar(&f.probe, "probe", false, "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.BoolVar(&f.yes, "yes", false, "")
	fs.Var(f.env, "env", "")
	fs.Var(f.headers, "header", "")
	fs.Float64Var(&f.timeout, "timeout", 0, "")
	fs.StringVar(&f.oauth.ClientID, "client-id", "", "")
	fs.StringVar(&f.oauth.ClientSecret, "client-secret", "", "")
	fs.StringVar(&f.oauth.ClientMetadataURL, "client-metadata-url", "", "")
	fs.IntVar(&f.oauth.CallbackPort, "callback-port", 0, "")
	fs.Var(&f.scopes, "scope", "")
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i:]
	}
	var err error
	if f.args, err = parseAnywhere(fs, args); err != nil {
		return nil, usagef("tally mcp %s: %v\n%s", sub, err, mcpUsage)
	}
	f.args = append(f.args, command...)
	return f, nil
}

// workspaceDir is --workspace or the current folder (the client's, when
// the app runs the command).
func (f *mcpFlags) workspaceDir() (string, error) {
	ws, err := workDir(f.served, f.workspace)
	if err != nil {
		return "", fmt.Errorf("tally mcp: %w; pass --workspace", err)
	}
	return ws, nil
}

// openBench opens the data directory of --data (or the one the app
// serves).
func (f *mcpFlags) openBench() (*workbench.Workbench, error) {
	o := &options{data: f.data, served: f.served}
	w, _, err := o.open()
	return w, err
}

// workspaceServers is the workspace folder and its MCP servers, the
// user's and the workspace's, as sessions opened now would see them.
func (f *mcpFlags) workspaceServers() (string, []workbench.MCPServer, error) {
	ws, w, err := f.openWorkspace()
	if err != nil {
		return "", nil, err
	}
	defer w.Close()
	servers, err := w.MCPServers(ws, nil)
	return ws, servers, err
}

// openWorkspace is the workspace folder and the open data directory of a
// command about one workspace; the caller closes the workbench.
func (f *mcpFlags) openWorkspace() (string, *workbench.Workbench, error) {
	ws, err := f.workspaceDir()
	if err != nil {
		return "", nil, err
	}
	w, err := f.openBench()
	return ws, w, err
}

func mcpList(args []string, stdout, stderr io.Writer) error {
	f, err := parseMCP("list", args)
	if err != nil {
		return err
	}
	f.served = servedBy(stderr)
	if len(f.args) > 0 {
		return usagef("tally mcp list: unexpected argument %q\n%s", f.args[0], mcpUsage)
	}
	ws, servers, err := f.workspaceServers()
	if err != nil {
		return err
	}
	type row struct {
		workbench.MCPServer
		Protocol  string            `json:",omitempty"`
		Tools     []mcp.ToolSummary `json:",omitempty"`
		Prompts   []mcp.Prompt      `json:",omitempty"`
		Resources []mcp.Resource    `json:",omitempty"`
		Error     string            `json:",omitempty"`
	}
	rows := make([]row, len(servers))
	for i, s := range servers {
		rows[i].MCPServer = s
		if f.probe && s.Enabled {
			p, err := workbench.ProbeMCPAll(context.Background(), s.Name, s.Config, ws)
			if err != nil {
				rows[i].Error = message(err)
			}
			rows[i].Protocol, rows[i].Tools, rows[i].Prompts, rows[i].Resources = p.Protocol, p.Tools, p.Prompts, p.Resources
		}
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		path, _ := workbench.MCPUserPath()
		fmt.Fprintf(stdout, "no MCP servers; add one with `tally mcp add`, or in %s\n", path)
		return nil
	}
	for _, r := range rows {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", safeText(r.Name), r.Source, mcpState(r.MCPServer), safeText(mcpTarget(r.Config)))
		if r.Error != "" {
			fmt.Fprintf(stdout, "  failed: %s\n", safeText(r.Error))
		}
		if r.Protocol != "" {
			fmt.Fprintf(stdout, "  speaks MCP %s\n", safeText(r.Protocol))
		}
		for _, t := range r.Tools {
			fmt.Fprintf(stdout, "  %s (%d tokens): %s\n", safeText(t.Name), t.Tokens, safeText(text.FirstLine(t.Description, quoteRunes)))
		}
		printPromptsAndResources(stdout, r.Prompts, r.Resources)
	}
	for _, r := range rows {
		if r.Source == workbench.MCPSourceWorkspace && !r.Trusted {
			fmt.Fprintf(stdout, "the workspace's servers do not run until you trust %s: `tally mcp trust --workspace %s`\n", r.Path, ws)
			break
		}
	}
	return nil
}

// mcpState says whether a listed server runs.
func mcpState(s workbench.MCPServer) string {
	switch {
	case s.Shadowed:
		return "shadowed by your server of that name"
	case !s.Trusted:
		return "not trusted"
	case s.Config.Disabled:
		return "disabled"
	case s.SignedIn:
		return "enabled, signed in"
	}
	return "enabled"
}

// mcpTarget is what a server runs or reaches.
func mcpTarget(sc mcp.ServerConfig) string {
	if sc.Kind() == mcp.TypeStdio {
		return strings.TrimSpace(sc.Command + " " + strings.Join(sc.Args, " "))
	}
	return sc.URL
}

func mcpTrust(sub string, args []string, stdout io.Writer) error {
	f, err := parseMCP(sub, args)
	if err != nil {
		return err
	}
	if len(f.args) > 0 {
		return usagef("tally mcp %s: unexpected argument %q; give the folder with --workspace", sub, f.args[0])
	}
	ws, w, err := f.openWorkspace()
	if err != nil {
		return err
	}
	defer w.Close()
	if sub == "untrust" {
		if err := w.UntrustMCP(ws); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "the MCP servers of %s no longer run\n", safeText(mcp.WorkspacePath(ws)))
		return nil
	}
	wf, err := w.MCPWorkspaceFile(ws)
	if err != nil {
		return err
	}
	if wf.Path == "" {
		return fmt.Errorf("tally mcp trust: %s has no MCP file (%s)", ws, mcp.WorkspacePath(ws))
	}
	if err := w.TrustMCP(ws, wf.Hash); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trusted %s; sessions opened from now on run:\n", safeText(wf.Path))
	for _, name := range wf.Preview.Names() {
		sc := wf.Preview.Servers[name]
		fmt.Fprintf(stdout, "  %s\t%s\n", safeText(name), safeText(mcpTarget(sc)))
		// Every variable and header as the file writes it: a reference to
		// one of the user's secrets refuses to start (see mcp.expandRefs).
		for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
			fmt.Fprintf(stdout, "    env %s=%s\n", safeText(k), safeText(sc.Env[k]))
		}
		for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
			fmt.Fprintf(stdout, "    header %s: %s\n", safeText(k), safeText(workbench.Mask(sc.Headers[k])))
		}
	}
	return nil
}

func mcpAdd(args []string, stdout io.Writer) error {
	f, err := parseMCP("add", args)
	if err != nil {
		return err
	}
	if len(f.args) == 0 || f.args[0] == "--" {
		return usagef("tally mcp add: give the server's name first\n%s", mcpUsage)
	}
	name, rest := f.args[0], f.args[1:]
	sc := mcp.ServerConfig{Timeout: f.timeout}
	switch {
	case f.url != "" && len(rest) > 0:
		return usagef("tally mcp add: give either --url or a command after --, not both")
	case f.url != "":
		sc.URL, sc.Headers = f.url, f.headers
		f.oauth.Scopes = f.scopes
		if f.oauth.ClientID != "" || f.oauth.ClientSecret != "" || f.oauth.ClientMetadataURL != "" || f.oauth.CallbackPort != 0 || len(f.oauth.Scopes) > 0 {
			sc.OAuth = &f.oauth
		}
	case len(rest) > 1 && rest[0] == "--":
		sc.Command, sc.Args, sc.Env = rest[1], rest[2:], f.env
	default:
		return usagef("tally mcp add: give the server's command after -- (tally mcp add %s -- npx -y SERVER) or its --url", name)
	}
	if len(sc.Env) == 0 {
		sc.Env = nil
	}
	if len(sc.Headers) == 0 {
		sc.Headers = nil
	}
	path, err := workbench.MCPUserPath()
	if err != nil {
		return err
	}
	cfg, err := mcp.LoadFile(path)
	if err != nil {
		return err
	}
	if _, ok := cfg.Servers[name]; ok {
		return fmt.Errorf("tally mcp add: there already is a server %q in %s; remove it first", name, path)
	}
	if err := workbench.SaveMCPServer(name, sc); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %s to %s; test it with `tally mcp list --probe`\n", safeText(name), safeText(path))
	return nil
}

func mcpEdit(sub string, args []string, stdout io.Writer) error {
	f, err := parseMCP(sub, args)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("tally mcp %s: give exactly one server name (see `tally mcp list`)", sub)
	}
	name := f.args[0]
	switch sub {
	case "remove":
		err = workbench.RemoveMCPServer(name)
	default:
		err = workbench.EnableMCPServer(name, sub == "enable")
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%sd %s\n", strings.TrimSuffix(sub, "e"), safeText(name))
	return nil
}

// mcpRunNote prints, before `tally run` starts a session, the one-line
// note that the workspace's MCP file is not trusted and so not used. It
// says nothing when the workspace has no such file or anything fails:
// the run itself reports real problems.
func mcpRunNote(args []string, stderr io.Writer) {
	o, err := parse("run", args, io.Discard)
	if err != nil {
		return
	}
	ws := o.workspace
	if ws == "" {
		if ws, err = os.Getwd(); err != nil {
			return
		}
	}
	if _, err := os.Stat(mcp.WorkspacePath(ws)); err != nil && o.session == "" {
		return
	}
	w, _, err := o.open()
	if err != nil {
		return
	}
	defer w.Close()
	if o.session != "" {
		info, err := w.Session(o.session)
		if errors.Is(err, workbench.ErrNotFound) {
			// A new session under this ID works in ws.
		} else if err != nil {
			return
		} else {
			ws = info.Workspace
		}
	}
	if wf, err := w.MCPWorkspaceFile(ws); err == nil && wf.NeedsTrust {
		fmt.Fprintln(stderr, "note: "+mcp.UntrustedNote(ws))
	}
}
