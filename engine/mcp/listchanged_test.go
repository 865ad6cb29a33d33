package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that adds a tool while connected announces it; the tool becomes
// pending, to be appended at the end of the catalog, and can be called.
func TestAnnouncedToolsArePending(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "grows", Version: "1"}, nil)
	addBasicTools(s, nil)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer func() { ts.CloseClientConnections(); ts.Close() }()
	m := newManager(t, map[string]ServerConfig{"grows": {URL: ts.URL, Timeout: 5}}, Options{})
	m.Start(context.Background())
	first := len(m.Pending())
	if first == 0 {
		t.Fatal("no tools at first")
	}
	sdk.AddTool(s, &sdk.Tool{Name: "later", Description: "Added while connected."},
		func(context.Context, *sdk.CallToolRequest, noIn) (*sdk.CallToolResult, any, error) {
			return textResult("later works"), nil, nil
		})
	var late []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && len(late) == 0; time.Sleep(20 * time.Millisecond) {
		for _, tl := range m.Pending() {
			late = append(late, tl.Spec().Name)
		}
	}
	if len(late) != 1 || late[0] != "mcp__grows__later" {
		t.Fatalf("pending after the announcement: %v", late)
	}
	if content, isErr := run(t, m, "mcp__grows__later", `{}`); isErr || content != "later works" {
		t.Errorf("the announced tool: %q (error %v)", content, isErr)
	}
}
