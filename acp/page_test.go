package acp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// signinServer is an MCP server over HTTP whose tool "signin" asks the
// user to open a page (an input request in URL mode) and reports the
// action that came back.
func signinServer(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "pages", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "signin", Description: "Sign in to the tracker."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, ok := req.Params.InputResponses["login"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"login": &sdk.ElicitParams{Mode: "url",
					Message: "Sign in to the tracker.", URL: "https://tracker.example.com/oauth/start", ElicitationID: "el-7"}}}, nil, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action=" + res.Action}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestAnMCPPageIsAskedOfTheEditor: a page an MCP server asks the user to
// open reaches a client that offers URL-mode elicitation as
// elicitation/create in URL mode, with its URL and an ID scoped to the
// session, and the editor's accept reaches the server; a client that
// offers only forms never sees it, and it is declined.
func TestAnMCPPageIsAskedOfTheEditor(t *testing.T) {
	for _, offered := range []bool{true, false} {
		t.Run(fmt.Sprint("offered=", offered), func(t *testing.T) {
			f := newFixtureWith(t, callThenSay("__signin", `{}`))
			f.forms, f.pages = true, offered
			url := signinServer(t)
			h := f.connect(t, "")
			h.client.elicit = func(acp.UnstableCreateElicitationRequest) acp.UnstableCreateElicitationResponse {
				return acp.UnstableCreateElicitationResponse{Accept: &acp.UnstableCreateElicitationAccept{Action: "accept"}}
			}
			resp, err := h.conn.NewSession(ctx(t), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{
				{Http: &acp.McpServerHttpInline{Name: "pages", Url: url, Headers: []acp.HttpHeader{}}}}})
			if err != nil {
				t.Fatal(err)
			}
			prompt(t, h, resp.SessionId, "sign me in")
			text := summarize(h.client.take()).text
			h.client.mu.Lock()
			asked := h.client.forms
			h.client.mu.Unlock()
			if !offered {
				if len(asked) != 0 || !strings.Contains(text, "action=decline") {
					t.Errorf("a client without URL-mode elicitation was asked %d times; the model got %q", len(asked), text)
				}
				return
			}
			if len(asked) != 1 || asked[0].Url == nil {
				t.Fatalf("%d elicitations asked, want one in URL mode: %+v", len(asked), asked)
			}
			p := asked[0].Url
			if p.Url != "https://tracker.example.com/oauth/start" || p.Mode != "url" || !strings.HasSuffix(string(p.ElicitationId), "/el-7") ||
				!strings.Contains(p.Message, `"pages"`) || !strings.Contains(p.Message, "Sign in to the tracker.") {
				t.Errorf("the page asked is %+v", *p)
			}
			if !strings.Contains(text, "action=accept") {
				t.Errorf("the server did not get the accept: %q", text)
			}
		})
	}
}
