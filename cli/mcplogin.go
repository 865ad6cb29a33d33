package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
)

// mcpLogin runs `tally mcp login NAME` and `tally mcp logout NAME`: it
// signs in to an HTTP server that asks for OAuth, or forgets the sign-in.
func mcpLogin(sub string, args []string, stdout io.Writer) error {
	f, err := parseMCP(sub, args)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("tally mcp %s: give exactly one server name (see `tally mcp list`)\n%s", sub, mcpUsage)
	}
	name := f.args[0]
	_, found, err := f.server(sub, name)
	if err != nil {
		return err
	}
	if found.Config.Kind() == mcp.TypeStdio {
		return fmt.Errorf("tally mcp %s: %q runs on this machine and needs no sign-in; sign-in is for servers reached by URL", sub, name)
	}
	if sub == "logout" {
		had, err := workbench.SignOutMCP(name, found.Config)
		if err != nil {
			return fmt.Errorf("tally mcp logout: %s", message(err))
		}
		if !had {
			fmt.Fprintf(stdout, "%s had no sign-in to forget\n", safeText(name))
			return nil
		}
		fmt.Fprintf(stdout, "signed out of %s; sessions ask you to sign in again\n", safeText(name))
		return nil
	}
	fresh, err := workbench.SignInMCP(context.Background(), name, found.Config, signInNote(name))
	if err != nil {
		return fmt.Errorf("tally mcp login: %s", message(err))
	}
	if !fresh {
		fmt.Fprintf(stdout, "%s already accepts Tally: it was signed in before or needs no sign-in\n", safeText(name))
		return nil
	}
	fmt.Fprintf(stdout, "signed in to %s; the sign-in is kept in %s\n", safeText(name), safeText(workbench.MCPCredentials()))
	return nil
}

// signInNote prints, on stderr, the page a sign-in to server name asks
// the user to open.
func signInNote(name string) func(string) {
	return func(url string) {
		fmt.Fprintf(os.Stderr, "To sign in to %s, open this page (Tally opens it in your browser):\n  %s\n", safeText(name), url)
	}
}
