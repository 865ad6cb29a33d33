package workbench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
)

type textIn struct {
	Text string `json:"text" jsonschema:"the text"`
}

// echoMCP serves an MCP server with one echo tool over streamable HTTP.
func echoMCP(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// userMCPDir points the user's MCP file into a fresh folder.
func userMCPDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	return dir
}

func TestMCPUserServersAddEnableRemove(t *testing.T) {
	dir := userMCPDir(t)
	w := bench(t, nil)
	url := echoMCP(t)
	if err := SaveMCPServer("files", mcp.ServerConfig{URL: url}); err != nil {
		t.Fatal(err)
	}
	if err := SaveMCPServer("bad name!", mcp.ServerConfig{URL: url}); err == nil {
		t.Error("an invalid server name was saved")
	}
	if err := EnableMCPServer("files", false); err != nil {
		t.Fatal(err)
	}
	list, err := w.MCPServers("", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "tally", mcp.FileName)
	if len(list) != 1 || list[0].Source != MCPSourceUser || list[0].Path != want || list[0].Enabled || list[0].Status.State != mcp.StateDisabled {
		t.Fatalf("servers = %+v", list)
	}
	if err := EnableMCPServer("files", true); err != nil {
		t.Fatal(err)
	}
	if list, _ = w.MCPServers("", nil); !list[0].Enabled {
		t.Error("enabling did not stick")
	}
	if err := RemoveMCPServer("files"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMCPServer("files"); !errors.Is(err, ErrNoMCPServer) {
		t.Errorf("removing a missing server: %v", err)
	}
	if list, _ = w.MCPServers("", nil); len(list) != 0 {
		t.Errorf("servers after remove = %+v", list)
	}
}

func TestMCPProbeListsTools(t *testing.T) {
	tools, err := ProbeMCP(context.Background(), "files", mcp.ServerConfig{URL: echoMCP(t)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "mcp__files__echo" || tools[0].Tokens == 0 {
		t.Errorf("tools = %+v", tools)
	}
	if _, err := ProbeMCP(context.Background(), "gone", mcp.ServerConfig{Command: filepath.Join(t.TempDir(), "missing")}, ""); err == nil {
		t.Error("probing a server that cannot start succeeded")
	}
}

// TestMCPWorkspaceTrust: a workspace's MCP file is listed but not run
// until trusted through the front door; a session then runs it.
func TestMCPWorkspaceTrust(t *testing.T) {
	userMCPDir(t)
	w := bench(t, nil)
	ws := t.TempDir()
	file := mcp.WorkspacePath(ws)
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"mcpServers": {"repo": {"url": "`+echoMCP(t)+`"}}}`), 0o644)
	wf, err := w.MCPWorkspaceFile(ws)
	if err != nil || !wf.NeedsTrust || wf.Hash == "" || len(wf.Preview.Servers) != 1 {
		t.Fatalf("workspace file = %+v, %v", wf, err)
	}
	list, _ := w.MCPServers(ws, nil)
	if len(list) != 1 || list[0].Source != MCPSourceWorkspace || list[0].Trusted || list[0].Enabled {
		t.Fatalf("servers = %+v", list)
	}
	if err := w.TrustMCP(ws, "0123"); err == nil {
		t.Error("a hash the file does not have was trusted")
	}
	if err := w.TrustMCP(ws, wf.Hash); err != nil {
		t.Fatal(err)
	}
	if wf, _ = w.MCPWorkspaceFile(ws); wf.NeedsTrust {
		t.Fatal("trust did not stick")
	}
	cfg, err := w.Config(SessionOptions{})
	if err != nil && !errors.Is(err, ErrNoModel) {
		t.Fatal(err)
	}
	sess, err := agent.Create(cfg, "", ws, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.MCP().Connect(context.Background(), "repo"); err != nil {
		t.Fatal(err)
	}
	list, _ = w.MCPServers(ws, sess)
	if len(list) != 1 || !list[0].Enabled || list[0].Status.State != mcp.StateConnected || list[0].Status.Tools != 1 {
		t.Errorf("servers with the live session = %+v", list)
	}
	if err := w.UntrustMCP(ws); err != nil {
		t.Fatal(err)
	}
	if wf, _ = w.MCPWorkspaceFile(ws); !wf.NeedsTrust {
		t.Error("trust was not withdrawn")
	}
}
