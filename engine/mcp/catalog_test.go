package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/tool"
)

func TestStreamableHTTP(t *testing.T) {
	t.Setenv("TALLY_TEST_HTTP_TOKEN", "tok-123")
	url, seen := httpServer(t, nil)
	sc := ServerConfig{URL: url, Headers: map[string]string{"Authorization": "Bearer ${TALLY_TEST_HTTP_TOKEN}", "X-Team": "blue"}}
	m := newManager(t, map[string]ServerConfig{"remote": sc}, Options{})
	m.Start(context.Background())
	if st := status(t, m, "remote"); st.State != StateConnected || st.Tools != 7 {
		t.Fatalf("status = %+v", st)
	}
	if content, isErr := run(t, m, "mcp__remote__echo", `{"text":"over http"}`); isErr || content != "echo: over http" {
		t.Fatalf("echo = %q (error %v)", content, isErr)
	}
	if content, isErr := run(t, m, "mcp__remote__refuse", `{}`); !isErr || content != "no such record" {
		t.Errorf("refuse = %q (error %v)", content, isErr)
	}
	// A tool the server does not know (it vanished since the listing) is
	// refused by the server, with its message.
	m.addTools(m.servers["remote"], []toolInfo{{Name: "ghost"}})
	if content, isErr := run(t, m, "mcp__remote__ghost", `{}`); !isErr || !strings.Contains(content, `"remote" refused the call (unknown tool`) {
		t.Errorf("unknown remote tool = %q (error %v)", content, isErr)
	}
	auth := seen.all("Authorization")
	if len(auth) == 0 || slices.ContainsFunc(auth, func(v string) bool { return v != "Bearer tok-123" }) {
		t.Errorf("Authorization headers = %q, want the expanded header on every request", auth)
	}
	if teams := seen.all("X-Team"); len(teams) == 0 || teams[0] != "blue" {
		t.Errorf("X-Team headers = %q", teams)
	}
	sc.Timeout = 0.3
	m2 := newManager(t, map[string]ServerConfig{"remote": sc}, Options{})
	m2.Start(context.Background())
	if content, isErr := run(t, m2, "mcp__remote__hang", `{}`); !isErr || !strings.Contains(content, "did not answer within 300ms") {
		t.Errorf("hang over http = %q (error %v)", content, isErr)
	}
	seen.release() // the SDK's server holds its session open until its handler returns
}

func TestHTTPServerUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	sc := ServerConfig{URL: url, Timeout: 5}
	m := newManager(t, map[string]ServerConfig{"gone": sc}, Options{})
	m.Start(context.Background())
	if st := status(t, m, "gone"); st.State != StateFailed || !strings.Contains(st.Reason, `"gone" could not be started or reached`) {
		t.Errorf("status = %+v", st)
	}
}

// smallServer returns an HTTP MCP server with the named no-op tools.
func smallServer(t *testing.T, tools ...string) ServerConfig {
	url, _ := httpServer(t, func(s *sdk.Server) {
		for _, name := range tools {
			sdk.AddTool(s, &sdk.Tool{Name: name, Description: "Tool " + name + "."},
				func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
					return textResult(name), nil, nil
				})
		}
	})
	return ServerConfig{URL: url}
}

// catalogWith builds a registry with the built-ins and the MCP tools of
// the given servers, added the way the caller does at session start.
func catalogWith(t *testing.T, servers map[string]ServerConfig) (*tool.Registry, *Manager) {
	reg := tool.NewRegistry()
	for _, b := range tool.Builtins() {
		reg.AddBuiltin(b)
	}
	m := newManager(t, servers, Options{})
	m.Start(context.Background())
	for _, tl := range m.Pending() {
		reg.AddExtra(tl)
	}
	return reg, m
}

func TestCatalogOrderStable(t *testing.T) {
	base, _ := catalogWith(t, nil)
	builtins := base.Catalog()
	if len(builtins) == 0 {
		t.Fatal("no built-in tools")
	}
	one := map[string]ServerConfig{"docs": smallServer(t, "search", "fetch")}
	three := map[string]ServerConfig{
		"zeta":  smallServer(t, "b", "a"),
		"alpha": smallServer(t, "run", "list"),
		"docs":  smallServer(t, "search", "fetch"),
	}
	cases := []struct {
		servers map[string]ServerConfig
		mcp     []string
	}{
		{nil, nil},
		{one, []string{"mcp__docs__fetch", "mcp__docs__search"}},
		{three, []string{"mcp__alpha__list", "mcp__alpha__run", "mcp__docs__fetch", "mcp__docs__search", "mcp__zeta__a", "mcp__zeta__b"}},
	}
	for _, c := range cases {
		for range 2 { // the same configuration twice gives the same bytes
			reg, _ := catalogWith(t, c.servers)
			cat := reg.Catalog()
			if !reflect.DeepEqual(cat[:len(builtins)], builtins) {
				t.Fatalf("with %d servers the built-in part of the catalog changed", len(c.servers))
			}
			var rest []string
			for _, s := range cat[len(builtins):] {
				rest = append(rest, s.Name)
			}
			if !slices.Equal(rest, c.mcp) {
				t.Fatalf("with %d servers the MCP tools are %v, want %v", len(c.servers), rest, c.mcp)
			}
		}
	}
}

func TestLateServerAppends(t *testing.T) {
	servers := map[string]ServerConfig{
		"alpha": smallServer(t, "run"),
		"zeta":  smallServer(t, "go"),
		"beta":  smallServer(t, "late"),
	}
	reg := tool.NewRegistry()
	for _, b := range tool.Builtins() {
		reg.AddBuiltin(b)
	}
	m := newManager(t, servers, Options{})
	for _, name := range []string{"alpha", "zeta"} {
		if err := m.Connect(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
	for _, tl := range m.Pending() {
		reg.AddExtra(tl)
	}
	before := reg.Catalog()
	if err := m.Connect(context.Background(), "beta"); err != nil {
		t.Fatal(err)
	}
	late := m.Pending()
	if len(late) != 1 || late[0].Spec().Name != "mcp__beta__late" {
		t.Fatalf("late tools = %v", late)
	}
	reg.Activate(late[0])
	after := reg.Catalog()
	if !reflect.DeepEqual(after[:len(before)], before) || after[len(after)-1].Name != "mcp__beta__late" {
		t.Fatalf("a late server reordered the catalog: %v", reg.Names())
	}
}

func TestSearchPathWith200Tools(t *testing.T) {
	reg := tool.NewRegistry()
	for _, b := range tool.Builtins() {
		reg.AddBuiltin(b)
	}
	var activated []string
	opts := Options{OnActivate: func(ts []tool.Tool) {
		for _, tl := range ts {
			activated = append(activated, tl.Spec().Name)
			reg.Activate(tl)
		}
	}}
	m := newManager(t, map[string]ServerConfig{"big": stdioServer(t, "many")}, opts)
	m.Start(context.Background())
	if st := status(t, m, "big"); st.Tools != 200 {
		t.Fatalf("status = %+v, want 200 tools", st)
	}
	u := m.Usage()
	if u.All <= DefaultBudget {
		t.Fatalf("the 200 tools take %d tokens, not past the budget %d", u.All, DefaultBudget)
	}
	pending := m.Pending()
	if len(pending) != 1 || pending[0].Spec().Name != "mcp_search" || pending[0].NeedsApproval() {
		t.Fatalf("pending = %v, want only mcp_search", pending)
	}
	reg.AddExtra(pending[0])
	if u := m.Usage(); !u.Search || u.Exposed == 0 || u.Exposed >= u.All/10 {
		t.Errorf("usage = %+v, want search mode with a small exposed size", u)
	}
	if _, ok := reg.Lookup("mcp__big__weather_forecast"); ok {
		t.Fatal("a tool is in the catalog before any search")
	}

	res := reg.Run(context.Background(), nil, "mcp_search", `{"query":"weather forecast for a city","limit":3}`)
	if res.IsError || !strings.Contains(res.Content, "mcp__big__weather_forecast") {
		t.Fatalf("search = %+v", res)
	}
	if len(activated) == 0 || activated[0] != "mcp__big__weather_forecast" {
		t.Fatalf("activated %v, want the weather tool first", activated)
	}
	names := reg.Names()
	if names[len(names)-len(activated)] != "mcp__big__weather_forecast" {
		t.Errorf("activated tools not appended at the end: %v", names)
	}
	res = reg.Run(context.Background(), nil, "mcp__big__weather_forecast", `{"text":"Lyon"}`)
	if res.IsError || res.Content != "sunny in Lyon" {
		t.Fatalf("activated tool call = %+v", res)
	}
	// Searching again does not activate the same tool twice.
	n := len(activated)
	reg.Run(context.Background(), nil, "mcp_search", `{"query":"weather"}`)
	if slices.Contains(activated[n:], "mcp__big__weather_forecast") {
		t.Errorf("the weather tool was activated twice: %v", activated)
	}
	if res := reg.Run(context.Background(), nil, "mcp_search", `{"query":"zzzz-nothing"}`); res.IsError || !strings.Contains(res.Content, "no MCP tool matches") {
		t.Errorf("empty search = %+v", res)
	}
	if res := reg.Run(context.Background(), nil, "mcp_search", `{"query":""}`); !res.IsError {
		t.Errorf("empty query = %+v", res)
	}
}

func TestBudgetPassedByLateServer(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("tool_%02d", i)
	}
	servers := map[string]ServerConfig{"small": smallServer(t, "one"), "large": smallServer(t, many...)}
	m := newManager(t, servers, Options{Budget: 400})
	if err := m.Connect(context.Background(), "small"); err != nil {
		t.Fatal(err)
	}
	first := m.Pending()
	if len(first) != 1 || first[0].Spec().Name != "mcp__small__one" {
		t.Fatalf("first = %v", first)
	}
	if err := m.Connect(context.Background(), "large"); err != nil {
		t.Fatal(err)
	}
	second := m.Pending()
	if len(second) != 1 || second[0].Spec().Name != "mcp_search" {
		t.Fatalf("second = %v, want mcp_search once the budget is passed", second)
	}
	if third := m.Pending(); len(third) != 0 {
		t.Errorf("third = %v", third)
	}
	found := m.Search("tool_07", 1)
	if len(found) != 1 || found[0].Spec().Name != "mcp__large__tool_07" {
		t.Errorf("search tool_07 = %v", toolNames(found))
	}
}

func TestToolSpecIsStable(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"docs": smallServer(t, "search")}, Options{})
	m.Start(context.Background())
	tl, _ := m.Lookup("mcp__docs__search")
	a := tl.Spec()
	a.Parameters[0] = 'X' // a caller modifying its copy
	b := tl.Spec()
	if !json.Valid(b.Parameters) || b.Name != "mcp__docs__search" {
		t.Errorf("Spec changed after a caller modified its copy: %s", b.Parameters)
	}
}

func TestHTTPServerGoesAway(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "http", Version: "1"}, nil)
	addBasicTools(s, nil)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	m := newManager(t, map[string]ServerConfig{"remote": {URL: ts.URL, Timeout: 5}}, Options{})
	m.Start(context.Background())
	if content, isErr := run(t, m, "mcp__remote__echo", `{"text":"a"}`); isErr {
		t.Fatalf("echo = %q", content)
	}
	ts.CloseClientConnections()
	ts.Close()
	content, isErr := run(t, m, "mcp__remote__echo", `{"text":"b"}`)
	// Depending on whether the SDK noticed the lost stream first, the
	// server could not be reached, stopped, or failed to reconnect.
	if !isErr || !strings.Contains(content, `"remote" stopped`) && !strings.Contains(content, `"remote" could not be`) {
		t.Fatalf("call to a vanished server = %q (error %v)", content, isErr)
	}
	// Whatever the SDK makes of the lost connection, calls keep failing
	// clearly and the server ends up failed after its one restart.
	for range 3 {
		if content, isErr := run(t, m, "mcp__remote__echo", `{"text":"c"}`); !isErr || !strings.Contains(content, `"remote"`) {
			t.Fatalf("later call to a vanished server = %q (error %v)", content, isErr)
		}
	}
	if st := status(t, m, "remote"); st.State != StateFailed || st.Restarts != 1 {
		t.Errorf("status = %+v, want failed after one restart", st)
	}
}

func TestNoBudgetOffersEverything(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("tool_%02d", i)
	}
	m := newManager(t, map[string]ServerConfig{"large": smallServer(t, many...)}, Options{Budget: -1, Count: func(s string) int { return len(s) }})
	m.Start(context.Background())
	if got := m.Pending(); len(got) != 40 {
		t.Errorf("pending = %d tools, want all 40 with no budget", len(got))
	}
	if u := m.Usage(); u.Search || u.Exposed != u.All || u.Handed != 40 {
		t.Errorf("usage = %+v", u)
	}
}
