package workbench

import (
	"context"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/browser"
	"github.com/tally-dev/tally/internal/keychain"
)

// SignInMCP signs Tally in to the HTTP MCP server name (configured as sc):
// when the server asks for authorization, show is given the authorization
// page's address to tell the user, and the page is opened in the user's
// browser ($BROWSER first); Tally serves the loopback redirect until the
// user finished, at most mcp.SignInWait, and keeps the grant in the
// user's keychain. fresh is false when the server already accepted Tally.
// Sessions that run the server then reach it after MCP().Connect.
func SignInMCP(ctx context.Context, name string, sc mcp.ServerConfig, show func(url string)) (fresh bool, err error) {
	return mcp.SignIn(ctx, name, sc, mcp.Options{Browse: signInPage(show)})
}

// signInPage shows the authorization page's address with show and opens
// it in the user's browser.
func signInPage(show func(url string)) func(string) error {
	return func(url string) error {
		show(url)
		return browser.Open(url)
	}
}

// SignOutMCP forgets the sign-in kept for the MCP server name (configured
// as sc); had says whether there was one. The server is not told.
func SignOutMCP(name string, sc mcp.ServerConfig) (had bool, err error) {
	return mcp.SignOut(name, sc, mcp.Options{})
}

// MCPSignedIn tells whether a sign-in is kept for the MCP server name.
func MCPSignedIn(name string, sc mcp.ServerConfig) bool {
	return mcp.SignedIn(name, sc, mcp.Options{})
}

// MCPCredentials says where sign-ins are kept: the system keychain, or
// the file that stands in for one.
func MCPCredentials() string {
	st, err := keychain.Default()
	if err != nil {
		return "the system keychain"
	}
	return st.Where()
}
