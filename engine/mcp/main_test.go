package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// serverEnv switches the test binary into an MCP server; its value is the
// server's mode. The variable reaches the child only because the test
// configuration sets it in "env": the child gets no other variable of the
// test process beyond the allow-listed basics.
const serverEnv = "TALLY_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		serve(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serve runs the test server of the given mode over stdio.
func serve(mode string) {
	switch mode {
	case "basic":
		s := sdk.NewServer(&sdk.Implementation{Name: "basic", Version: "1"}, nil)
		addBasicTools(s, nil)
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
	case "many":
		s := sdk.NewServer(&sdk.Implementation{Name: "many", Version: "1"}, nil)
		addManyTools(s)
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
	case "modern", "legacy":
		serveEra(mode)
	case "fail":
		fmt.Fprintln(os.Stderr, "fatal: missing config file /etc/test-server.conf")
		os.Exit(1)
	case "malformed":
		serveMalformed()
	case "where":
		// Reports where it runs and what it searches.
		s := sdk.NewServer(&sdk.Implementation{Name: "where", Version: "1"}, nil)
		sdk.AddTool(s, &sdk.Tool{Name: "where", Description: "Report the working folder and search paths."},
			func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
				wd, _ := os.Getwd()
				return textResult(strings.Join([]string{"cwd=" + wd, "PATH=" + os.Getenv("PATH"),
					"PYTHONPATH=" + os.Getenv("PYTHONPATH"), "NODE_PATH=" + os.Getenv("NODE_PATH")}, "\n")), nil, nil
			})
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
	case "leak":
		// A server that dies echoing its credentials to stderr.
		fake := secretstest.New(21)
		fmt.Fprintln(os.Stderr, "auth failed with token "+fake.GitHubPAT+" and key "+fake.AWSKeyID)
		fmt.Fprint(os.Stderr, "retrying with "+fake.OpenAIKey)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "unknown test server mode", mode)
		os.Exit(2)
	}
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type noIn struct{}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// addBasicTools adds the tools of the "basic" server. The hang tool
// ignores cancellation and answers only when release is closed (never,
// when it is nil).
func addBasicTools(s *sdk.Server, release <-chan struct{}) {
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return textResult("echo: " + in.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Report the server's environment.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
			env := os.Environ()
			sort.Strings(env)
			return textResult(strings.Join(env, "\n")), nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "structured", Description: "Return structured content only.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"count": 3}}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "picture", Description: "Return a picture and a caption."},
		func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a red square"},
				&sdk.ImageContent{Data: []byte("PNGDATA"), MIMEType: "image/png"},
				&sdk.ResourceLink{URI: "file:///tmp/x.txt", Name: "x"},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "refuse", Description: "Always report a tool error."},
		func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no such record"}}, IsError: true}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit the server in the middle of the call."},
		func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "boom: simulated crash")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answer."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ noIn) (*sdk.CallToolResult, any, error) {
			if release == nil {
				select {} // ignores cancellation, like a stuck server
			}
			select { // over HTTP, let the test's server shut down
			case <-release:
			case <-ctx.Done():
			}
			return textResult("released"), nil, nil
		})
}

// addManyTools adds 200 tools: 199 archive readers and one weather tool.
func addManyTools(s *sdk.Server) {
	for i := range 199 {
		sdk.AddTool(s, &sdk.Tool{
			Name:        fmt.Sprintf("read_record_%03d", i),
			Description: fmt.Sprintf("Read record number %d from the archive shelf and return its fields, its history and its attachments as text.", i),
		}, func(context.Context, *sdk.CallToolRequest, echoIn) (*sdk.CallToolResult, any, error) {
			return textResult(fmt.Sprintf("record %d", i)), nil, nil
		})
	}
	sdk.AddTool(s, &sdk.Tool{Name: "weather_forecast", Description: "Get the weather forecast for a city."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return textResult("sunny in " + in.Text), nil, nil
		})
}

// serveMalformed speaks JSON-RPC by hand: it initialises properly, lists
// tools whose schemas are not object schemas, and answers every call with
// a result that does not fit the protocol.
func serveMalformed() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // a notification or junk
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			reply["result"] = map[string]any{
				"protocolVersion": req.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "malformed", "version": "0"},
			}
		case "tools/list":
			reply["result"] = map[string]any{"tools": []any{
				map[string]any{"name": "bad", "description": "A tool with a string schema.", "inputSchema": "oops"},
				map[string]any{"name": "weird.name/x", "inputSchema": map[string]any{"type": "string"}},
			}}
		case "tools/call":
			reply["result"] = map[string]any{"content": 42}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		_ = out.Encode(reply)
	}
}

// stdioServer returns the configuration of a test server of the given mode
// run by re-executing the test binary.
func stdioServer(t *testing.T, mode string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Command: exe, Env: map[string]string{serverEnv: mode}}
}

// httpServer starts a streamable HTTP MCP server with the basic tools, or
// with the tools add gives, and returns its URL; the headers of each
// request are recorded in seen. The server's hung calls end at the test's
// end, or earlier through seen.release.
func httpServer(t *testing.T, add func(*sdk.Server)) (url string, seen *headerLog) {
	t.Helper()
	release := make(chan struct{})
	if add == nil {
		add = func(s *sdk.Server) { addBasicTools(s, release) }
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "http", Version: "1"}, nil)
	add(s)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	seen = &headerLog{release: sync.OnceFunc(func() { close(release) })}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add(r.Header)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(seen.release) // runs first: lets hung handlers end
	return ts.URL, seen
}

type headerLog struct {
	release func()
	mu      sync.Mutex
	hs      []http.Header
}

func (l *headerLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hs = append(l.hs, h.Clone())
}

func (l *headerLog) all(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, h := range l.hs {
		out = append(out, h.Get(name))
	}
	return out
}

// newManager makes a manager for the servers and closes it at the end.
func newManager(t *testing.T, servers map[string]ServerConfig, opts Options) *Manager {
	t.Helper()
	m := NewManager(Config{Servers: servers}, opts)
	t.Cleanup(m.Close)
	return m
}

// run calls the named tool of m with JSON arguments.
func run(t *testing.T, m *Manager, name, args string) (string, bool) {
	t.Helper()
	tl, ok := m.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s; have %v", name, toolNames(m.Tools()))
	}
	res := tl.Run(context.Background(), nil, json.RawMessage(args))
	return res.Content, res.IsError
}

func toolNames(ts []*Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

func status(t *testing.T, m *Manager, name string) ServerStatus {
	t.Helper()
	for _, st := range m.Statuses() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no status for %s", name)
	return ServerStatus{}
}
