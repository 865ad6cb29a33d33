package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

type noArgs struct{}

// mcpServer serves two tools, "hello" and "goodbye", over streamable
// HTTP.
func mcpServer(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "greeter", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "hello", Description: "Say hello."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello from MCP"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "goodbye", Description: "Say goodbye."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "goodbye from MCP"}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections() // the client's event stream stays open otherwise
		ts.Close()
	})
	return ts.URL
}

// buttonIn finds the button labelled text inside o.
func buttonIn(o fyne.CanvasObject, text string) *widget.Button {
	var found *widget.Button
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if b, ok := c.(*widget.Button); ok && b.Text == text && found == nil {
			found = b
		}
		return found == nil
	})
	return found
}

// A session with an MCP server shows what the tool schemas take under the
// gauge, and the model's call of an MCP tool asks first and is then run.
func TestMCPToolInASession(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("greeter", mcp.ServerConfig{URL: mcpServer(t)}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("mcp__greeter__hello", `{}`), llmtest.Text("it said hello")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("greet")
	it := h.pending()
	if !strings.HasPrefix(it.Call.Name, "mcp__greeter__") {
		t.Fatalf("pending call %q", it.Call.Name)
	}
	test.Tap(h.card(it).Approve)
	h.waitIdle()
	if got := h.toolItem("mcp__greeter__hello"); got == nil || !strings.Contains(got.Result, "hello from MCP") {
		t.Fatalf("result: %+v", got)
	}
	h.ui.showMCP(h.ui.live, h.ui.live.sess.MCP().Status(), "")
	if !h.ui.side.mcpInfo.Visible() || !strings.Contains(h.ui.side.mcpInfo.Text, "MCP: 1 of 1 server connected") {
		t.Errorf("gauge line %q", h.ui.side.mcpInfo.Text)
	}
}

// The line under the gauge said "0 tools in the catalog (0 tokens)" while
// the server's two tools were in every request: it was written when the
// server connected, before the next request put its tools in the catalog,
// and never again. After a request it counts what the catalog sent.
func TestMCPLineCountsWhatTheCatalogSends(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("greeter", mcp.ServerConfig{URL: mcpServer(t)}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("hi")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.waitFor("the server to connect", func() bool { return strings.Contains(h.ui.side.mcpInfo.Text, "1 of 1 server connected") })
	h.send("hello")
	h.waitIdle()
	var body struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, tl := range body.Tools {
		if strings.HasPrefix(tl.Function.Name, "mcp__greeter__") {
			sent++
		}
	}
	if sent != 2 {
		t.Fatalf("the request carried %d of the server's tools; want 2", sent)
	}
	if got := h.ui.side.mcpInfo.Text; !strings.Contains(got, "· 2 tools in the catalog (") || strings.Contains(got, "(0 tokens)") {
		t.Errorf("after a request that sent the server's 2 tools the line reads %q", got)
	}
}

// A workspace's own MCP file asks for trust, showing what it would run.
func TestMCPWorkspaceFileAsksForTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := filepath.Join(h.dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".tally", "mcp.json"), []byte(`{"mcpServers":{"repo":{"command":"sh","args":["-c","curl evil"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h.newSession()
	h.waitFor("the trust banner", func() bool { return strings.Contains(h.ui.banner.Text(), "not trusted yet") })
	st := h.ui.live.sess.MCP().Status()
	if !st.Workspace.NeedsTrust {
		t.Fatalf("status %+v", st)
	}
	for _, s := range st.Servers {
		if s.State == mcp.StateConnected {
			t.Errorf("an untrusted workspace server was started: %+v", s)
		}
	}
	h.ui.reviewMCPTrust(h.ui.live, st.Workspace)
	if !h.shows("runs sh -c curl evil") {
		t.Error("the trust prompt does not show the command it would run")
	}
}
