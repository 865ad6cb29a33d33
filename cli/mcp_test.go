package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

type mcpText struct {
	Text string `json:"text" jsonschema:"the text"`
}

// echoMCPServer serves an MCP server with one echo tool over streamable
// HTTP and returns its URL.
func echoMCPServer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in mcpText) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		// `tally run` leaves its session's clients to the process's end.
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func TestMCPAddListProbeRemove(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	data, ws := t.TempDir(), t.TempDir()
	url := echoMCPServer(t)
	if out, errOut, code := runCLI(t, "mcp", "add", "files", "--url", url); code != ExitOK || !strings.Contains(out, "added files") {
		t.Fatalf("add: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "mcp", "add", "files", "--url", url); code != ExitFail || !strings.Contains(errOut, "already") {
		t.Errorf("adding twice: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "mcp", "add", "tool", "--env", "A=1", "--", "my-server", "--flag"); code != ExitOK {
		t.Fatalf("add stdio: exit %d", code)
	}
	b, _ := os.ReadFile(filepath.Join(cfgDir, "tally", "mcp.json"))
	if !strings.Contains(string(b), `"my-server"`) || !strings.Contains(string(b), `"--flag"`) || !strings.Contains(string(b), `"A": "1"`) {
		t.Errorf("user file = %s", b)
	}
	runCLI(t, "mcp", "disable", "tool")
	out, errOut, code := runCLI(t, "mcp", "list", "--probe", "--data", data, "--workspace", ws)
	if code != ExitOK {
		t.Fatalf("list: exit %d, %q", code, errOut)
	}
	if !strings.Contains(out, "files\tuser\tenabled\t"+url) || !strings.Contains(out, "mcp__files__echo") ||
		!strings.Contains(out, "\n  speaks MCP 20") {
		t.Errorf("list = %q", out)
	}
	if !strings.Contains(out, "tool\tuser\tdisabled\tmy-server --flag") {
		t.Errorf("the disabled server is not listed as such: %q", out)
	}
	for _, name := range []string{"files", "tool"} {
		if _, errOut, code := runCLI(t, "mcp", "remove", name); code != ExitOK {
			t.Fatalf("remove %s: exit %d, %q", name, code, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "mcp", "remove", "files"); code != ExitFail || !strings.Contains(errOut, "tally mcp list") {
		t.Errorf("removing a missing server: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "mcp", "frobnicate"); code != ExitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

// TestMCPRunIgnoresUntrustedWorkspaceFile: `tally run` asks nothing: an
// untrusted workspace MCP file is ignored with a note saying how to trust
// it; after `tally mcp trust` its tools are offered to the model.
func TestMCPRunIgnoresUntrustedWorkspaceFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	var offered [][]string
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		offered = append(offered, req.Tools)
		return llmtest.Text("ok")
	}))
	t.Cleanup(srv.Close)
	data, ws := t.TempDir(), t.TempDir()
	file := filepath.Join(ws, ".tally", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"mcpServers": {"repo": {"url": "`+echoMCPServer(t)+`"}}}`), 0o644)
	run := func() string {
		t.Helper()
		_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "test-model", "--workspace", ws, "hi")
		if code != ExitOK {
			t.Fatalf("run: exit %d, %q", code, errOut)
		}
		return errOut
	}
	errOut := run()
	if !strings.Contains(errOut, "tally mcp trust --workspace "+ws) || slices.Contains(offered[0], "mcp__repo__echo") {
		t.Fatalf("untrusted: stderr %q, tools %v", errOut, offered[0])
	}
	out, _, _ := runCLI(t, "mcp", "list", "--data", data, "--workspace", ws)
	if !strings.Contains(out, "repo\tworkspace\tnot trusted") {
		t.Errorf("list = %q", out)
	}
	if out, errOut, code := runCLI(t, "mcp", "trust", "--data", data, "--workspace", ws); code != ExitOK || !strings.Contains(out, "repo") {
		t.Fatalf("trust: exit %d, %q %q", code, out, errOut)
	}
	if errOut = run(); strings.Contains(errOut, "not trusted") || !slices.Contains(offered[1], "mcp__repo__echo") {
		t.Errorf("trusted: stderr %q, tools %v", errOut, offered[1])
	}
}

// tally inspect starts no MCP server; it says that the catalog it shows
// lacks their tools rather than pass for what the model sees.
func TestInspectNotesTheMissingMCPTools(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("ok")))
	t.Cleanup(srv.Close)
	data, ws := t.TempDir(), t.TempDir()
	if _, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "test-model", "--workspace", ws, "--session", "s", "hi"); code != ExitOK {
		t.Fatalf("run: %q", errOut)
	}
	out, _, _ := runCLI(t, "inspect", "--data", data, "s")
	if strings.Contains(out, "lacks the tools of the MCP servers") {
		t.Fatalf("a note without any MCP server:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "mcp", "add", "docs", "--url", "http://127.0.0.1:1/mcp"); code != ExitOK {
		t.Fatalf("mcp add: %q", errOut)
	}
	out, _, _ = runCLI(t, "inspect", "--data", data, "s")
	if !strings.Contains(out, "lacks the tools of the MCP servers [docs]") {
		t.Errorf("inspect does not say the catalog lacks the MCP tools:\n%s", out)
	}
}

// `tally mcp call` calls one tool of a server outside any session, for
// trying a server: the tool's result is printed, a tool error or an
// unknown tool exits 1 saying why.
func TestMCPCallCallsOneTool(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	data, ws := t.TempDir(), t.TempDir()
	url := echoMCPServer(t)
	if _, errOut, code := runCLI(t, "mcp", "add", "files", "--url", url); code != ExitOK {
		t.Fatalf("add: exit %d, %q", code, errOut)
	}
	out, errOut, code := runCLI(t, "mcp", "call", "files", "echo", `{"text":"hello from the shell"}`, "--data", data, "--workspace", ws)
	if code != ExitOK || !strings.Contains(out, "hello from the shell") {
		t.Fatalf("call: exit %d, %q %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "mcp", "call", "files", "echo", `{"text":"as json"}`, "--json", "--data", data, "--workspace", ws)
	if code != ExitOK || !strings.Contains(out, `"content":"as json"`) || !strings.Contains(out, `"is_error":false`) {
		t.Errorf("call --json: exit %d, %q", code, out)
	}
	if _, errOut, code := runCLI(t, "mcp", "call", "files", "nope", "--data", data, "--workspace", ws); code != ExitFail || !strings.Contains(errOut, `no tool "nope"`) || !strings.Contains(errOut, "echo") {
		t.Errorf("an unknown tool: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "mcp", "call", "files", "echo", "[1,2]", "--data", data, "--workspace", ws); code != ExitFail || !strings.Contains(errOut, "not a JSON object") {
		t.Errorf("bad arguments: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "mcp", "call", "missing", "echo", "--data", data, "--workspace", ws); code != ExitFail || !strings.Contains(errOut, `no MCP server "missing"`) {
		t.Errorf("an unknown server: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "mcp", "call", "files"); code != ExitUsage {
		t.Errorf("no tool named: exit %d", code)
	}
}

// TestMCPLoginLogoutAndOAuthFlags: mcp add keeps the OAuth settings given;
// login refuses a stdio server; logout of a server never signed in says
// so. (Signing in for real is run against the MCP conformance suite's
// authorization servers by scripts/conformance.)
func TestMCPLoginLogoutAndOAuthFlags(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	t.Setenv("TALLY_KEYCHAIN", "off")
	if _, errOut, code := runCLI(t, "mcp", "add", "gh", "--url", "https://example.test/mcp", "--client-id", "abc", "--client-secret", "${GH_SECRET}",
		"--callback-port", "33418", "--scope", "repo read:user"); code != ExitOK {
		t.Fatalf("add: exit %d, %q", code, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(cfgDir, "tally", "mcp.json"))
	for _, want := range []string{`"clientId": "abc"`, `"clientSecret": "${GH_SECRET}"`, `"callbackPort": 33418`, `"read:user"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("user file lacks %s: %s", want, b)
		}
	}
	if _, errOut, code := runCLI(t, "mcp", "add", "bad", "--url", "https://example.test/mcp", "--client-secret", "s"); code == ExitOK || !strings.Contains(errOut, "no client ID") {
		t.Errorf("a secret without a client ID: exit %d, %q", code, errOut)
	}
	runCLI(t, "mcp", "add", "local", "--", "my-server")
	if _, errOut, code := runCLI(t, "mcp", "login", "local", "--workspace", t.TempDir(), "--data", t.TempDir()); code == ExitOK || !strings.Contains(errOut, "needs no sign-in") {
		t.Errorf("login of a stdio server: exit %d, %q", code, errOut)
	}
	if out, errOut, code := runCLI(t, "mcp", "logout", "gh", "--workspace", t.TempDir(), "--data", t.TempDir()); code != ExitOK || !strings.Contains(out, "no sign-in to forget") {
		t.Errorf("logout with no sign-in: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "mcp", "login", "nobody", "--workspace", t.TempDir(), "--data", t.TempDir()); code == ExitOK || !strings.Contains(errOut, "no MCP server") {
		t.Errorf("login of an unknown server: exit %d, %q", code, errOut)
	}
}
