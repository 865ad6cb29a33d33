package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// trackerServer is an MCP server whose tool "tickets" refuses to run until
// the user has connected the tracker on a page of its own (a loopback
// page, which says the step is done when it is opened); it returns the
// server's URL.
func trackerServer(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	var connected bool
	var session *sdk.ServerSession
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connected = true
		ss := session
		mu.Unlock()
		if ss != nil {
			_ = ss.NotifyElicitationComplete(context.Background(), &sdk.ElicitationCompleteParams{ElicitationID: "el-9"})
		}
		w.Write([]byte("connected"))
	}))
	t.Cleanup(page.Close)
	url, _ := httpServer(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "tickets", Description: "Count the open tickets.", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				mu.Lock()
				defer mu.Unlock()
				session = req.Session
				if !connected {
					return nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{{Mode: "url", Message: "Connect your tracker.",
						URL: page.URL + "/connect", ElicitationID: "el-9"}})
				}
				return textResult("3 open tickets"), nil
			})
	})
	return url
}

// TestACallWaitsForThePagesItNeeds: a call the server refuses until a page
// is opened shows the page to the user; once they open it (the page tells
// the server) the call is tried again and gets its result. A user who
// declines gets a result that says so, and the call is not tried again.
func TestACallWaitsForThePagesItNeeds(t *testing.T) {
	url := trackerServer(t)
	var asked []Form
	m := connectElicit(t, url, ServerConfig{}, func(_ context.Context, f Form) (Reply, error) {
		asked = append(asked, f)
		resp, err := http.Get(f.URL) // the user opens the page
		if err != nil {
			return Reply{}, err
		}
		resp.Body.Close()
		return Reply{Action: ActionAccept}, nil
	})
	if out, isErr := run(t, m, "mcp__forms__tickets", `{}`); isErr || out != "3 open tickets" {
		t.Fatalf("the call gave %q (error %v)", out, isErr)
	}
	if len(asked) != 1 || !asked[0].Page() || asked[0].ElicitationID != "el-9" || asked[0].Message != "Connect your tracker." {
		t.Errorf("the user was asked %+v", asked)
	}

	declined := trackerServer(t)
	m = connectElicit(t, declined, ServerConfig{}, func(context.Context, Form) (Reply, error) { return Declined, nil })
	out, isErr := run(t, m, "mcp__forms__tickets", `{}`)
	if !isErr || !strings.Contains(out, "needs the user to open a page first (Connect your tracker.), and they did not") {
		t.Errorf("a declined page gave %q (error %v)", out, isErr)
	}
}
