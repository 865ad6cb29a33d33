package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/workbench"
)

// mcpCall runs `tally mcp call NAME TOOL [JSON]`: it starts the server on
// its own, calls one tool with the JSON arguments (an object; {} when
// none) and prints the result, for trying and debugging a server outside
// a session. A workspace's server runs only once its file is trusted, and
// in the command sandbox. A form the server asks for during the call is
// put to the user on a terminal, accepted with its defaults with --yes
// and declined otherwise (see formAnswerer). The exit status is 1 when the
// tool reports an error, or --yes could not answer a form.
func mcpCall(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseMCP("call", args)
	if err != nil {
		return err
	}
	if len(f.args) < 2 || len(f.args) > 3 {
		return usagef("tally mcp call: give the server, the tool and, if it takes any, its arguments as one JSON object\n%s", mcpUsage)
	}
	name, toolName, raw := f.args[0], f.args[1], "{}"
	if len(f.args) == 3 {
		raw = f.args[2]
	}
	ws, found, err := f.server("call", name)
	if err != nil {
		return err
	}
	switch {
	case found.Source == workbench.MCPSourceWorkspace && !found.Trusted:
		return fmt.Errorf("tally mcp call: %q is a server of the workspace's untrusted %s; trust it first with `tally mcp trust --workspace %s`", name, found.Path, ws)
	}
	forms := newFormAnswerer("tally mcp call", f.yes, stdin, stderr, nil)
	res, err := workbench.CallMCP(context.Background(), name, found.Config, ws, toolName, json.RawMessage(raw), forms.answer, signInNote(name))
	if err != nil {
		return fmt.Errorf("tally mcp call: %s", message(err))
	}
	if f.json {
		if err := json.NewEncoder(stdout).Encode(struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}{res.Content, res.IsError}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, safeText(res.Content))
	}
	if res.IsError {
		return fmt.Errorf("tally mcp call: the tool %s of %s reported an error (above)", toolName, name)
	}
	return forms.failure()
}

// server is the server name as sessions of the workspace would run it.
func (f *mcpFlags) server(sub, name string) (string, *workbench.MCPServer, error) {
	ws, servers, err := f.workspaceServers()
	if err != nil {
		return "", nil, err
	}
	for i := range servers {
		if servers[i].Name == name && !servers[i].Shadowed {
			return ws, &servers[i], nil
		}
	}
	return "", nil, fmt.Errorf("tally mcp %s: there is no MCP server %q; see `tally mcp list`", sub, name)
}
