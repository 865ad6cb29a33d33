package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/secrets/secretstest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/trust"
)

// mcpServerEnv switches the test binary into a stdio MCP server; the
// variable reaches the child only because the server's configuration sets
// it in "env".
const mcpServerEnv = "TALLY_AGENT_MCP_TEST_SERVER"

func init() {
	if os.Getenv(mcpServerEnv) == "leak" {
		// A server that dies echoing its credentials to stderr.
		fmt.Fprintln(os.Stderr, "login failed for token "+secretstest.New(22).GitHubPAT)
		os.Exit(1)
	}
	if os.Getenv(mcpServerEnv) != "" {
		s := sdk.NewServer(&sdk.Implementation{Name: "stdio", Version: "1"}, nil)
		addEchoTools(s, nil)
		sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit the server in the middle of the call."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "boom: simulated crash")
				os.Exit(3)
				return nil, nil, nil
			})
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func textOut(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// addEchoTools adds echo (counting its calls in calls, when set) and
// shout.
func addEchoTools(s *sdk.Server, calls *atomic.Int32) {
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			if calls != nil {
				calls.Add(1)
			}
			return textOut("echo: " + in.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "shout", Description: "Echo the text back in capitals."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			return textOut(strings.ToUpper(in.Text)), nil, nil
		})
}

// mcpHTTP serves an MCP server over streamable HTTP with the tools add
// gives; while down reports true, every request is answered 503.
func mcpHTTP(t *testing.T, add func(*sdk.Server), down *atomic.Bool) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "http", Version: "1"}, nil)
	add(s)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down != nil && down.Load() {
			http.Error(w, "starting up", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func echoServer(t *testing.T, calls *atomic.Int32) mcp.ServerConfig {
	return mcp.ServerConfig{URL: mcpHTTP(t, func(s *sdk.Server) { addEchoTools(s, calls) }, nil)}
}

// mcpSession creates a session whose user MCP servers are servers and
// closes it at the end.
func (h *harness) mcpSession(id string, servers map[string]mcp.ServerConfig) *Session {
	h.t.Helper()
	h.cfg.MCP.User = &mcp.Config{Servers: servers}
	h.cfg.MCP.LogDir = h.t.TempDir()
	s := h.session(id)
	h.t.Cleanup(func() { s.Close() })
	return s
}

// toolsOf returns the raw tools array of a recorded request body.
func toolsOf(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req.Tools
}

func lastTool(req *llmtest.Req) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "tool" {
			return req.Messages[i].Content
		}
	}
	return ""
}

func TestMCPApprovedCallReachesNextRequest(t *testing.T) {
	var calls atomic.Int32
	var sawTools []string
	var result string
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		switch req.Step {
		case 0:
			sawTools = req.Tools
			return llmtest.Call("mcp__files__echo", `{"text":"hello"}`)
		case 1:
			result = lastTool(req)
		}
		return llmtest.Text("done")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	s := h.mcpSession("mcp-call", map[string]mcp.ServerConfig{"files": echoServer(t, &calls)})
	if _, err := s.Run(context.Background(), "echo hello"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	// The MCP tools come after every built-in, sorted.
	if n := len(sawTools); n < 3 || sawTools[n-2] != "mcp__files__echo" || sawTools[n-1] != "mcp__files__shout" {
		t.Fatalf("tools offered = %v; want the MCP tools last", sawTools)
	}
	if calls.Load() != 1 || !strings.Contains(result, "echo: hello") {
		t.Errorf("server ran %d calls; the next request's result = %q", calls.Load(), result)
	}
	// A session that had sent nothing has no drift for the MCP tools.
	if d := h.rec.kinds(EventDrift); len(d) != 0 {
		t.Errorf("drift events %v; want none", d[0].Reason)
	}
	st := s.MCP().Status()
	if len(st.Servers) != 1 || st.Servers[0].State != mcp.StateConnected || st.Usage.Exposed == 0 || st.Usage.Handed != 2 {
		t.Errorf("MCPStatus = %+v", st)
	}
}

func TestMCPDeniedCallNeverRuns(t *testing.T) {
	var calls atomic.Int32
	var result string
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.Step == 0 {
			return llmtest.Call("mcp__files__echo", `{"text":"hello"}`)
		}
		result = lastTool(req)
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, nil) // nil approver: deny
	s := h.mcpSession("mcp-deny", map[string]mcp.ServerConfig{"files": echoServer(t, &calls)})
	if _, err := s.Run(context.Background(), "echo hello"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	if calls.Load() != 0 || !strings.Contains(result, "denied") {
		t.Errorf("server ran %d calls; result %q; want a denial and no call", calls.Load(), result)
	}
}

func TestMCPCrashGivesErrorResultAndEvent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		switch req.Step {
		case 0:
			return llmtest.Call("mcp__local__crash", `{}`)
		case 1:
			results = append(results, lastTool(req))
			return llmtest.Text("the server crashed")
		case 2:
			return llmtest.Call("mcp__local__echo", `{"text":"again"}`)
		case 3:
			results = append(results, lastTool(req))
		}
		return llmtest.Text("done")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	s := h.mcpSession("mcp-crash", map[string]mcp.ServerConfig{
		"local": {Command: exe, Env: map[string]string{mcpServerEnv: "1"}},
	})
	res, err := s.Run(context.Background(), "crash it")
	if err != nil || res.Reason != step.ReasonDone {
		t.Fatalf("Run = %+v, %v; the session must go on", res, err)
	}
	if len(results) != 1 || !strings.HasPrefix(results[0], "mcp__local__crash") || !strings.Contains(results[0], "local") {
		t.Fatalf("crash result = %q", results)
	}
	var banner []string
	for _, e := range h.rec.kinds(EventMCP) {
		if e.Err != "" {
			banner = append(banner, e.Err)
		}
	}
	if len(banner) == 0 || !strings.Contains(banner[0], `"local"`) {
		t.Errorf("no EventMCP error for the crash: %q", banner)
	}
	if p := s.MCP().Status().Problems(); len(p) != 1 || p[0].State != mcp.StateCrashed {
		t.Errorf("problems = %+v; want the crashed server", p)
	}
	// The next call restarts the server once.
	if _, err := s.Run(context.Background(), "try echo"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	if len(results) != 2 || results[1] != "echo: again" {
		t.Errorf("call after the crash = %q", results)
	}
}

// TestMCPCatalogKeepsBuiltinBytes: the built-in tools' bytes in the
// request are the same with 0, 1 and 3 servers; MCP tools follow, sorted.
func TestMCPCatalogKeepsBuiltinBytes(t *testing.T) {
	srv := func(t *testing.T) mcp.ServerConfig { return echoServer(t, nil) }
	var base []json.RawMessage
	for _, n := range []int{0, 1, 3} {
		h := newHarness(t, llmtest.Sequence(llmtest.Text("ok")), nil)
		servers := map[string]mcp.ServerConfig{}
		for i := range n {
			servers[fmt.Sprintf("s%d", 3-i)] = srv(t)
		}
		s := h.mcpSession(fmt.Sprintf("order-%d", n), servers)
		if _, err := s.Run(context.Background(), "hi"); err != nil {
			t.Fatal(err)
		}
		h.noInvalid()
		tools := toolsOf(t, h.srv.Requests()[0].Body)
		if n == 0 {
			base = tools
			continue
		}
		if len(tools) != len(base)+2*n {
			t.Fatalf("%d servers: %d tools; want %d", n, len(tools), len(base)+2*n)
		}
		for i := range base {
			if string(tools[i]) != string(base[i]) {
				t.Fatalf("%d servers: built-in tool %d changed:\n%s\n%s", n, i, base[i], tools[i])
			}
		}
		var names []string
		for _, raw := range tools[len(base):] {
			var tl struct{ Function struct{ Name string } }
			json.Unmarshal(raw, &tl)
			names = append(names, tl.Function.Name)
		}
		if !slices.IsSorted(names) || (n == 3 && !strings.HasPrefix(names[0], "mcp__s1__")) {
			t.Errorf("%d servers: MCP tools %v; want them sorted by server then tool", n, names)
		}
	}
}

// TestMCPLateServerAppendsBooked: a server that connects after the session
// sent requests appends its tools at the end, a booked prefix change.
func TestMCPLateServerAppendsBooked(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	late := mcp.ServerConfig{URL: mcpHTTP(t, func(s *sdk.Server) { addEchoTools(s, nil) }, &down)}
	h := newHarness(t, llmtest.Sequence(llmtest.Text("one"), llmtest.Text("two")), nil)
	s := h.mcpSession("mcp-late", map[string]mcp.ServerConfig{"early": echoServer(t, nil), "late": late})
	if _, err := s.Run(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	if p := s.MCP().Status().Problems(); len(p) != 1 || p[0].Name != "late" {
		t.Fatalf("problems = %+v; want the late server failed", p)
	}
	down.Store(false)
	if err := s.MCP().Connect(context.Background(), "late"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "second"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	first, second := toolsOf(t, reqs[0].Body), toolsOf(t, reqs[1].Body)
	if len(second) != len(first)+2 {
		t.Fatalf("second request has %d tools; want %d", len(second), len(first)+2)
	}
	for i := range first {
		if string(first[i]) != string(second[i]) {
			t.Fatalf("tool %d changed when the late server connected", i)
		}
	}
	if !strings.Contains(string(second[len(first)]), "mcp__late__echo") {
		t.Errorf("the late tools are not at the end: %s", second[len(first)])
	}
	d := h.rec.kinds(EventDrift)
	if len(d) != 1 || !d[0].Drift.Booked || !strings.Contains(d[0].Drift.Reason, "mcp__late__echo") {
		t.Fatalf("drift events = %+v; want one booked MCP change", d)
	}
	rows, _ := s.Audit().Ledger()
	if last := rows[len(rows)-1]; last.Drift == nil || !last.Drift.Booked {
		t.Errorf("the ledger does not record the booked drift: %+v", last.Drift)
	}
}

// addManyTools adds 199 archive readers and one weather tool.
func addManyTools(s *sdk.Server) {
	for i := range 199 {
		sdk.AddTool(s, &sdk.Tool{
			Name:        fmt.Sprintf("read_record_%03d", i),
			Description: fmt.Sprintf("Read record number %d from the archive shelf and return its fields, its history and its attachments as text.", i),
		}, func(context.Context, *sdk.CallToolRequest, echoArgs) (*sdk.CallToolResult, any, error) {
			return textOut(fmt.Sprintf("record %d", i)), nil, nil
		})
	}
	sdk.AddTool(s, &sdk.Tool{Name: "weather_forecast", Description: "Get the weather forecast for a city."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			return textOut("sunny in " + in.Text), nil, nil
		})
}

func TestMCPSearchActivatesTools(t *testing.T) {
	var tools [][]string
	var results []string
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		tools = append(tools, req.Tools)
		switch req.Step {
		case 0:
			return llmtest.Call("mcp_search", `{"query":"weather forecast","limit":1}`)
		case 1:
			results = append(results, lastTool(req))
			return llmtest.Call("mcp__many__weather_forecast", `{"text":"Paris"}`)
		case 2:
			results = append(results, lastTool(req))
		}
		return llmtest.Text("done")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	url := mcpHTTP(t, addManyTools, nil)
	s := h.mcpSession("mcp-search", map[string]mcp.ServerConfig{"many": {URL: url}})
	if _, err := s.Run(context.Background(), "weather in Paris?"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	if len(tools) != 3 {
		t.Fatalf("%d requests; want 3", len(tools))
	}
	if n := len(tools[0]); tools[0][n-1] != "mcp_search" || slices.Contains(tools[0], "mcp__many__weather_forecast") {
		t.Fatalf("first catalog ends %v; want mcp_search instead of 200 tools", tools[0][n-3:])
	}
	if n := len(tools[1]); n != len(tools[0])+1 || tools[1][n-1] != "mcp__many__weather_forecast" {
		t.Fatalf("second catalog ends %v; want the found tool appended", tools[1][max(0, n-3):])
	}
	if len(results) != 2 || !strings.Contains(results[0], "mcp__many__weather_forecast") || results[1] != "sunny in Paris" {
		t.Errorf("results = %q", results)
	}
	d := h.rec.kinds(EventDrift)
	if len(d) != 1 || !d[0].Drift.Booked {
		t.Errorf("drift events = %+v; want the activation booked", d)
	}
	u := s.MCP().Status().Usage
	if !u.Search || u.Tools != 200 || u.Handed != 1 || u.Exposed >= u.All {
		t.Errorf("usage = %+v", u)
	}
}

func TestMCPWorkspaceFileNeedsTrust(t *testing.T) {
	h := newHarness(t, llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("ok") }), nil)
	url := mcpHTTP(t, func(s *sdk.Server) { addEchoTools(s, nil) }, nil)
	file := mcp.WorkspacePath(h.ws)
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"mcpServers": {"repo": {"url": "`+url+`"}}}`), 0o644)
	offered := func(id string) (*Session, []string) {
		t.Helper()
		s := h.mcpSession(id, nil)
		if _, err := s.Run(context.Background(), "hi"); err != nil {
			t.Fatal(err)
		}
		reqs := h.srv.Requests()
		return s, reqs[len(reqs)-1].Tools
	}
	s, tools := offered("untrusted")
	if slices.Contains(tools, "mcp__repo__echo") {
		t.Fatal("an untrusted workspace file's server was used")
	}
	st := s.MCP().Status()
	if !st.Workspace.NeedsTrust || len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "tally mcp trust") {
		t.Fatalf("status = %+v; want the file to need trust with a note", st)
	}
	if e := h.rec.kinds(EventMCP); len(e) == 0 || !strings.Contains(e[0].Err, "not trusted") {
		t.Errorf("no EventMCP note for the untrusted file: %+v", e)
	}
	if err := trust.Put(h.st, trust.MCP, h.ws, st.Workspace.Hash); err != nil {
		t.Fatal(err)
	}
	if _, tools = offered("trusted"); !slices.Contains(tools, "mcp__repo__echo") {
		t.Fatalf("a trusted workspace file's server was not used: %v", tools)
	}
	// Any change asks again.
	os.WriteFile(file, []byte(`{"mcpServers": {"repo": {"url": "`+url+`/other"}}}`), 0o644)
	if _, tools = offered("changed"); slices.Contains(tools, "mcp__repo__echo") {
		t.Fatal("a changed workspace file was used without new trust")
	}
}

func TestMCPCloseStopsServers(t *testing.T) {
	h := newHarness(t, nil, nil)
	s := h.mcpSession("mcp-close", map[string]mcp.ServerConfig{"files": echoServer(t, nil)})
	if err := s.MCP().Connect(context.Background(), "files"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if st := s.MCP().Status().Servers; st[0].State != mcp.StateStopped {
		t.Errorf("after Close the server is %s; want stopped", st[0].State)
	}
}
