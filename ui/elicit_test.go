package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// formServer serves a tool that asks for a form and returns what it got.
func formServer(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"email":{"type":"string","title":"Email"},
		"plan":{"type":"string","enum":["free","pro"],"default":"free"}},"required":["email"]}`)
	sdk.AddTool(s, &sdk.Tool{Name: "signup", Description: "Sign the user up."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Sign up?", RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "got " + res.Action + " " + string(b)}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// A server's form during a session's call opens as the dialog; the
// answer, with the defaults of the fields left out, reaches the server.
func TestSessionFormReachesTheServer(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("crm", mcp.ServerConfig{URL: formServer(t)}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("mcp__crm__signup", `{}`), llmtest.Text("signed up")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("sign me up")
	test.Tap(h.card(h.pending()).Approve)
	h.waitFor("the form", func() bool { return len(h.ui.live.waits.forms) == 1 && h.ui.live.waits.forms[0].dlg != nil })
	if h.ui.badgeOf(h.ui.live.id) != badgeWaiting || !h.overlayShows("Sign up?") {
		t.Error("the waiting form is not shown or not badged")
	}
	test.Type(fynetest.Find[*tw.EscEntry](h.win.Canvas().Overlays().Top(), nil), "ada@example.com")
	h.tapInDialog("Accept")
	h.waitIdle()
	if got := h.toolItem("mcp__crm__signup"); got == nil || !strings.Contains(got.Result, `got accept {"email":"ada@example.com","plan":"free"}`) {
		t.Fatalf("result: %+v", got)
	}
	if len(h.ui.live.waits.forms) != 0 {
		t.Error("the answered form still waits")
	}
}
