package extensions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// harness shows the views in a test window. Work runs its work at once
// and queues what it returns, which waitFor applies as the window's UI
// goroutine would later.
type harness struct {
	t     *testing.T
	win   fyne.Window
	wb    *workbench.Workbench
	queue []func()
	said  []string // what the banner said
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	test.NewTempApp(t)
	h := &harness{t: t, win: test.NewTempWindow(t, widget.NewLabel(""))}
	h.win.Resize(fyne.NewSize(1200, 800))
	wb, _, err := workbench.Open(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wb.Close() })
	h.wb = wb
	return h
}

func (h *harness) host() Host {
	say := func(msg string) { h.said = append(h.said, msg) }
	return Host{Window: h.win, Work: h.work, Do: func(fn func()) { h.queue = append(h.queue, fn) }, Info: say, Error: say, Copy: func(string) {}}
}

func (h *harness) work(work func() func()) {
	if apply := work(); apply != nil {
		h.queue = append(h.queue, apply)
	}
}

// waitFor applies what the work queued until cond holds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	for range 100 {
		if cond() {
			return
		}
		q := h.queue
		h.queue = nil
		for _, fn := range q {
			fn()
		}
	}
	h.t.Fatalf("%s never happened", what)
}

// showMCPServers opens the MCP servers dialog with no session shown.
func (h *harness) showMCPServers() *MCPServers {
	return ShowMCPServers(h.host(), MCP{Shown: func() (*agent.Session, string) { return nil, "" }, Servers: h.wb.MCPServers})
}

type noArgs struct{}

// mcpServer serves one tool, "hello", over streamable HTTP.
func mcpServer(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "greeter", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "hello", Description: "Say hello."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello from MCP"}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections() // the client's event stream stays open otherwise
		ts.Close()
	})
	return ts.URL
}

// rowSays reports whether a label in o contains s.
func rowSays(o fyne.CanvasObject, s string) bool {
	return fynetest.Find(o, func(l *widget.Label) bool { return strings.Contains(l.Text, s) }) != nil
}

// Settings → MCP servers adds a server, tests it (its tools listed),
// disables and removes it; the user's MCP file follows.
func TestMCPSettingsAddTestDisableRemove(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url := mcpServer(t)
	h := newHarness(t)
	v := h.showMCPServers()
	h.waitFor("the list", func() bool { return len(v.list.Objects) > 0 })
	v.name.SetText("greeter")
	v.command.SetText(url)
	v.add()
	h.waitFor("the new server", func() bool { return len(v.servers) == 1 })
	if v.servers[0].Name != "greeter" || v.servers[0].Config.URL != url {
		t.Fatalf("servers %+v", v.servers)
	}
	test.Tap(fynetest.Button(v.list, "Test"))
	h.waitFor("the probe", func() bool { return len(v.probed) > 0 || strings.HasPrefix(v.status.Text, "greeter:") })
	if len(v.probed) != 1 || v.probed[0].RemoteName != "hello" || !strings.Contains(v.status.Text, "hello — Say hello.") {
		t.Fatalf("probe: %+v, status %q", v.probed, v.status.Text)
	}
	var enabled *widget.Check
	fynetest.Walk(v.list, func(c fyne.CanvasObject) bool {
		if ch, ok := c.(*widget.Check); ok {
			enabled = ch
		}
		return true
	})
	enabled.SetChecked(false)
	h.waitFor("the disabled server", func() bool { return len(v.servers) == 1 && v.servers[0].Config.Disabled })
	test.Tap(fynetest.Button(v.list, "Remove"))
	h.waitFor("the removal", func() bool { return len(v.servers) == 0 })
	path, _ := workbench.MCPUserPath()
	if b, err := os.ReadFile(path); err != nil || strings.Contains(string(b), "greeter") {
		t.Errorf("the user's MCP file after Remove: %q, %v", b, err)
	}
}

// A failed MCP test showed "client is closing: write |1: broken pipe" in
// faint text while the server's row still said "idle".
func TestFailedMCPTestSaysSoInASentence(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("crashy", mcp.ServerConfig{Command: "sh", Args: []string{"-c", "exit 3"}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	v := h.showMCPServers()
	h.waitFor("the list", func() bool { return len(v.servers) == 1 })
	test.Tap(fynetest.Button(v.list, "Test"))
	h.waitFor("the test to fail", func() bool { return strings.Contains(v.status.Text, "failed") })
	if !strings.HasPrefix(v.status.Text, "The test of crashy failed: ") || v.status.Importance != widget.DangerImportance {
		t.Errorf("status %q (importance %v); want a sentence in the error colour", v.status.Text, v.status.Importance)
	}
	h.waitFor("the row to say so", func() bool { return rowSays(v.list, "test failed") })
	if rowSays(v.list, "\nidle") {
		t.Error("the row still says idle")
	}
}

// A server's row said "idle" after a successful Test (the session shown
// does not run it): it says what the test found.
func TestTestedServerRowSaysItIsReachable(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("greeter", mcp.ServerConfig{URL: mcpServer(t)}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	v := h.showMCPServers()
	h.waitFor("the list", func() bool { return len(v.servers) == 1 })
	if !rowSays(v.list, "\nidle") {
		t.Fatal("before a test the row does not say idle")
	}
	test.Tap(fynetest.Button(v.list, "Test"))
	h.waitFor("the row to say what the test found", func() bool { return rowSays(v.list, "\nreachable · 1 tool (tested)") })
	if rowSays(v.list, "\nidle") {
		t.Error("the row still says idle")
	}
}

// Between a server's connection and the next request its tools are not in
// the catalog yet: the line said "0 tools in the catalog (0 tokens)".
func TestMCPLineBeforeAndAfterTheToolsReachTheCatalog(t *testing.T) {
	servers := []mcp.ServerStatus{{Name: "greeter", State: mcp.StateConnected}}
	for _, c := range []struct {
		usage mcp.Usage
		want  string
	}{
		{mcp.Usage{Tools: 2, All: 310}, "MCP: 1 of 1 server connected · 2 tools, in the catalog from the next request"},
		{mcp.Usage{Tools: 2, Handed: 2, All: 310, Exposed: 310}, "MCP: 1 of 1 server connected · 2 tools in the catalog (310 tokens)"},
	} {
		if got := MCPLine(mcp.SessionStatus{Servers: servers, Usage: c.usage}); got != c.want {
			t.Errorf("usage %+v: %q; want %q", c.usage, got, c.want)
		}
	}
}
