package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageServer starts an HTTP server whose tool "signin" asks the user to
// open page (URL mode) and reports the action it got back; after an
// accept it says the step is complete.
func pageServer(t *testing.T, page string) string {
	t.Helper()
	url, _ := httpServer(t, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "signin", Description: "Sign in to the tracker."},
			func(ctx context.Context, req *sdk.CallToolRequest, _ noIn) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "url", Message: "Sign in to the tracker.", URL: page, ElicitationID: "el-1"})
				if err != nil {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "elicit failed: " + err.Error()}}, IsError: true}, nil, nil
				}
				if res.Action == "accept" {
					_ = req.Session.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: "el-1"})
				}
				return textResult("action=" + res.Action), nil, nil
			})
	})
	return url
}

// TestElicitAsksToOpenAPage: a URL-mode request reaches the host as a
// page with its URL, host name and ID; the host's accept goes back as an
// accept with no content, and a decline as a decline.
func TestElicitAsksToOpenAPage(t *testing.T) {
	const page = "https://tracker.example.com/oauth/start?state=x1"
	for _, action := range []Action{ActionAccept, ActionDecline} {
		var mu sync.Mutex
		var got []Form
		url := pageServer(t, page)
		m := connectElicit(t, url, ServerConfig{}, func(_ context.Context, f Form) (Reply, error) {
			mu.Lock()
			got = append(got, f)
			mu.Unlock()
			return Reply{Action: action, Content: map[string]any{"ignored": true}}, nil
		})
		out, _ := run(t, m, "mcp__forms__signin", `{}`)
		if want := "action=" + string(action); out != want {
			t.Errorf("%s: the call gave %q, want %q", action, out, want)
		}
		mu.Lock()
		if len(got) != 1 || !got[0].Page() || got[0].URL != page || got[0].Host() != "tracker.example.com" ||
			got[0].ElicitationID != "el-1" || got[0].Message != "Sign in to the tracker." || len(got[0].Fields) != 0 {
			t.Errorf("%s: the host was asked %+v, want the page %s", action, got, page)
		}
		mu.Unlock()
	}
}

// TestElicitRefusesPagesItWillNotOpen: a page that is not https (but on
// this machine), carries a password or is not absolute is refused with an
// error the server reads, and the host is never asked.
func TestElicitRefusesPagesItWillNotOpen(t *testing.T) {
	for page, want := range map[string]string{
		"http://tracker.example.com/start":                       "not https",
		"https://ada:secret@example.com/x":                       "user name or password",
		"/relative/page":                                         "not an absolute URL",
		"javascript:alert(1)":                                    "not an absolute URL",
		"https://example.com/\x1b[31mred":                        "control characters",
		"https://example.com/" + strings.Repeat("a", maxPageURL): "bytes long",
	} {
		url := pageServer(t, page)
		asked := false
		m := connectElicit(t, url, ServerConfig{}, func(context.Context, Form) (Reply, error) {
			asked = true
			return Reply{Action: ActionAccept}, nil
		})
		out, _ := run(t, m, "mcp__forms__signin", `{}`)
		if asked || !strings.Contains(out, want) {
			t.Errorf("%.40q: asked=%v, the call gave %q; want it refused (%s)", page, asked, out, want)
		}
	}
	for _, ok := range []string{"http://127.0.0.1:8123/cb", "http://localhost/x", "http://[::1]/y", "https://example.com/z"} {
		if err := checkPageURL(ok); err != nil {
			t.Errorf("checkPageURL(%q) = %v; want it taken", ok, err)
		}
	}
}
