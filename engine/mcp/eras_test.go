package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/tool"
)

// wireLog records what reached an HTTP test server: each JSON-RPC
// method, and the values of a few headers over all requests.
type wireLog struct {
	mu       sync.Mutex
	methods  []string
	versions map[string]bool // MCP-Protocol-Version values
	probes   int             // requests of the new revision other than server/discover
	sessions int             // requests that carried an Mcp-Session-Id
	mcpParam map[string]string
	srv      *sdk.Server
	hello    []string // the bodies of server/discover and initialize
}

// count counts the requests of the method.
func (l *wireLog) count(method string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.methods {
		if m == method {
			n++
		}
	}
	return n
}

func (l *wireLog) saw(method string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.methods, method)
}

func (l *wireLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("methods %v, versions %v, %d requests with a session id", l.methods, l.versions, l.sessions)
}

// eraSDKServer is a server, built with the SDK's server side, that speaks
// only the given revision of MCP. Its tools: "who" names the server,
// "confirm" asks the user to confirm (through an input_required result,
// which the SDK turns into an elicitation/create request for a client of
// an older revision) and "region" has a parameter mirrored into a header.
// Its tools/list results say they stay fresh for ttl; it announces
// changes to its tools only when announce is set.
func eraSDKServer(name, version string, ttl time.Duration, announce bool) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ServerOptions{
		SupportedProtocolVersions: []string{version},
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: announce}},
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) {
			c.TTLMs, c.CacheScope = int(ttl/time.Millisecond), "private"
		},
	})
	sdk.AddTool(s, &sdk.Tool{Name: "who", Description: "Name the server."},
		func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
			return textResult("I am " + name), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "confirm", Description: "Ask the user to confirm."},
		func(_ context.Context, req *sdk.CallToolRequest, _ noIn) (*sdk.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"ok": &sdk.ElicitParams{
					Message: "Go ahead on " + name + "?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
						"sure": {Type: "boolean", Title: "Sure", Default: json.RawMessage("true")},
					}},
				}}, RequestState: "step-1"}, nil, nil
			}
			r, ok := req.Params.InputResponses["ok"].(*sdk.ElicitResult)
			if !ok {
				return textResult("no answer"), nil, nil
			}
			return textResult(fmt.Sprintf("%s got %s %v (state %q)", name, r.Action, r.Content["sure"], req.Params.RequestState)), nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "region", Description: "Report the region.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("region " + string(req.Params.Arguments)), nil
		})
	return s
}

// serveEra runs the stdio test server of mode "modern" (2026-07-28 only)
// or "legacy" (2025-11-25 only).
func serveEra(mode string) {
	version := "2025-11-25"
	if mode == "modern" {
		version = "2026-07-28"
	}
	_ = eraSDKServer(mode, version, 0, true).Run(context.Background(), &sdk.StdioTransport{})
}

// eraServer serves eraSDKServer over streamable HTTP and records the
// wire. The SDK serves the 2026-07-28 revision over HTTP only without
// sessions (stateless), which that revision has none of anyway.
func eraServer(t *testing.T, name, version string, ttl time.Duration, announce bool) (string, *wireLog) {
	t.Helper()
	s := eraSDKServer(name, version, ttl, announce)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
		Stateless: version >= modernProtocol,
	})
	log := &wireLog{versions: map[string]bool{}, mcpParam: map[string]string{}, srv: s}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		log.mu.Lock()
		if msg.Method != "" {
			log.methods = append(log.methods, msg.Method)
		}
		if msg.Method == "server/discover" || msg.Method == "initialize" {
			log.hello = append(log.hello, string(body))
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
			log.versions[v] = true
			if v >= modernProtocol && msg.Method != "server/discover" {
				log.probes++
			}
		}
		if r.Header.Get("Mcp-Session-Id") != "" {
			log.sessions++
		}
		if v := r.Header.Get("Mcp-Param-Region"); v != "" {
			log.mcpParam["Region"] = v
		}
		log.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, log
}

// TestBothErasInOneSession attaches a server that speaks only 2026-07-28
// and one that speaks only 2025-11-25 to one session: each is spoken to
// in its own revision, the tools of both reach the catalog and run, and a
// server's request for input reaches the same form host in both.
func TestBothErasInOneSession(t *testing.T) {
	newURL, newWire := eraServer(t, "modern", "2026-07-28", 0, true)
	oldURL, oldWire := eraServer(t, "legacy", "2025-11-25", 0, true)
	var mu sync.Mutex
	var forms []Form
	r := StartSession(SessionOptions{
		Workspace: t.TempDir(),
		User: &Config{Servers: map[string]ServerConfig{
			"modern": {URL: newURL},
			"legacy": {URL: oldURL},
		}},
		Budget: -1,
		Wait:   30 * time.Second,
		Elicit: func(_ context.Context, f Form) (Reply, error) {
			mu.Lock()
			forms = append(forms, f)
			mu.Unlock()
			return Reply{Action: ActionAccept, Content: map[string]any{}}, nil
		},
	})
	t.Cleanup(r.Close)
	r.AwaitStart()
	batch, _, _ := r.Take()
	var names []string
	byName := map[string]tool.Tool{}
	for _, tl := range batch {
		names = append(names, tl.Spec().Name)
		byName[tl.Spec().Name] = tl
	}
	want := []string{"mcp__legacy__confirm", "mcp__legacy__region", "mcp__legacy__who",
		"mcp__modern__confirm", "mcp__modern__region", "mcp__modern__who"}
	if !slices.Equal(names, want) {
		t.Fatalf("the catalog got %v, want %v (status %+v)", names, want, r.Status().Servers)
	}
	protocols := map[string]string{}
	for _, st := range r.Status().Servers {
		protocols[st.Name] = st.Protocol
	}
	if protocols["modern"] != "2026-07-28" || protocols["legacy"] != "2025-11-25" {
		t.Fatalf("the servers were spoken to in %v", protocols)
	}

	call := func(name, args string) string {
		t.Helper()
		res := byName[name].Run(context.Background(), &tool.Env{}, json.RawMessage(args))
		if res.IsError {
			t.Fatalf("%s failed: %s", name, res.Content)
		}
		return res.Content
	}
	if got := call("mcp__modern__who", `{}`); got != "I am modern" {
		t.Fatalf("modern's who gave %q", got)
	}
	if got := call("mcp__legacy__who", `{}`); got != "I am legacy" {
		t.Fatalf("legacy's who gave %q", got)
	}
	// The new revision asks in an input_required result, whose state
	// comes back as it was; the old one asks with elicitation/create.
	// Both forms reach the host alike, and the defaults complete them.
	if got := call("mcp__modern__confirm", `{}`); got != `modern got accept true (state "step-1")` {
		t.Fatalf("modern's confirm gave %q", got)
	}
	if got := call("mcp__legacy__confirm", `{}`); !strings.HasPrefix(got, "legacy got accept true") {
		t.Fatalf("legacy's confirm gave %q", got)
	}
	mu.Lock()
	if len(forms) != 2 || forms[0].Server != "modern" || forms[1].Server != "legacy" ||
		forms[0].Message != "Go ahead on modern?" || len(forms[0].Fields) != 1 || len(forms[1].Fields) != 1 ||
		forms[0].Fields[0].Name != forms[1].Fields[0].Name {
		t.Fatalf("the forms reached the host as %+v", forms)
	}
	mu.Unlock()
	if got := call("mcp__modern__region", `{"region":"eu-1"}`); !strings.Contains(got, "eu-1") {
		t.Fatalf("modern's region gave %q", got)
	}
	call("mcp__legacy__region", `{"region":"eu-2"}`)

	// The wire: no handshake and no session with the new server, which
	// gets the parameter mirrored in a header too; the handshake with
	// the old one, which is asked server/discover once and then only
	// spoken to in its own revision.
	if newWire.saw("initialize") || !newWire.saw("server/discover") || newWire.sessions != 0 ||
		!newWire.versions["2026-07-28"] || len(newWire.versions) != 1 || newWire.mcpParam["Region"] != "eu-1" {
		t.Fatalf("the modern server saw %s, headers %v", newWire, newWire.mcpParam)
	}
	if !oldWire.saw("initialize") || oldWire.probes != 0 || oldWire.mcpParam["Region"] != "" {
		t.Fatalf("the legacy server saw %s, headers %v", oldWire, oldWire.mcpParam)
	}
	// Both are told Tally fills in forms and opens pages, and neither that
	// it has roots.
	if len(newWire.hello) != 1 || len(oldWire.hello) != 2 {
		t.Fatalf("the greetings: %q and %q", newWire.hello, oldWire.hello)
	}
	for _, hello := range append(newWire.hello, oldWire.hello...) {
		if !strings.Contains(hello, `"elicitation":{"form":{},"url":{}}`) || strings.Contains(hello, `"roots"`) {
			t.Errorf("a server was greeted with %s", hello)
		}
	}
}

// TestBothErasOverStdio is TestBothErasInOneSession over stdio: each
// server is spoken to in its own revision and its input request reaches
// the form host.
func TestBothErasOverStdio(t *testing.T) {
	modern, legacy := stdioServer(t, "modern"), stdioServer(t, "legacy")
	var forms []string
	m := newManager(t, map[string]ServerConfig{"modern": modern, "legacy": legacy}, Options{
		Elicit: func(_ context.Context, f Form) (Reply, error) {
			forms = append(forms, f.Server)
			return Reply{Action: ActionAccept, Content: map[string]any{"sure": false}}, nil
		},
	})
	m.Start(context.Background())
	for name, want := range map[string]string{"modern": "2026-07-28", "legacy": "2025-11-25"} {
		if st := status(t, m, name); st.State != StateConnected || st.Protocol != want {
			t.Fatalf("%s: %+v, want connected in %s", name, st, want)
		}
		if out, isErr := run(t, m, "mcp__"+name+"__who", `{}`); isErr || out != "I am "+name {
			t.Fatalf("%s's who gave %q", name, out)
		}
		if out, isErr := run(t, m, "mcp__"+name+"__confirm", `{}`); isErr || !strings.HasPrefix(out, name+" got accept false") {
			t.Fatalf("%s's confirm gave %q", name, out)
		}
	}
	if len(forms) != 2 {
		t.Fatalf("the host was asked %v", forms)
	}
}
