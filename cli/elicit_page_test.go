package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// signinPage is the page the test server asks the user to open.
const signinPage = "https://tracker.example.com/oauth/start?state=x1"

// addPageServer configures, as "forms", an MCP server whose tool "signin"
// asks the user to open signinPage (URL mode) and returns the action it
// got; it returns the data and workspace folders.
func addPageServer(t *testing.T) (data, ws string) {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "pages", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "signin", Description: "Sign in to the tracker.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "url", Message: "Sign in to the tracker.", URL: signinPage, ElicitationID: "el-1"})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "got " + res.Action}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	file := filepath.Join(home, "tally", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"forms": {"url": "`+ts.URL+`", "allowReadOnly": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return t.TempDir(), t.TempDir()
}

// Without a terminal, and with --yes, a page is declined, saying why: no
// one is there to open it.
func TestMCPCallDeclinesAPageWithoutATerminal(t *testing.T) {
	for _, yes := range []bool{false, true} {
		data, ws := addPageServer(t)
		args := []string{"mcp", "call", "forms", "signin", "--data", data, "--workspace", ws}
		why := "standard input is not a terminal to ask on"
		if yes {
			args, why = append(args, "--yes"), "--yes does not open pages"
		}
		out, errOut, code := runCLI(t, args...)
		if code != ExitOK || !strings.Contains(out, "got decline") {
			t.Fatalf("yes=%v: exit %d, out %q, err %q", yes, code, out, errOut)
		}
		if want := `the MCP server "forms" asks you to open a page ("Sign in to the tracker."), but ` + why + ", so it was declined"; !strings.Contains(errOut, want) {
			t.Errorf("yes=%v: stderr %q does not say %q", yes, errOut, want)
		}
	}
}
