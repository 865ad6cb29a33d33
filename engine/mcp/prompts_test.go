package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addPromptsAndResources gives s two prompts, two resources, a binary one
// and a template.
func addPromptsAndResources(s *sdk.Server) {
	s.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a change.\nCarefully.", Arguments: []*sdk.PromptArgument{
		{Name: "pr", Description: "the pull request", Required: true},
		{Name: "focus", Description: "what to look at"},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		a := req.Params.Arguments
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "Review PR " + a["pr"] + " focusing on " + a["focus"] + "."}},
			{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://style", MIMEType: "text/plain", Text: "Use tabs."}}},
			{Role: "user", Content: &sdk.ImageContent{Data: []byte("PNGDATA"), MIMEType: "image/png"}},
		}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "chat", Description: "A conversation."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "hello"}},
				{Role: "assistant", Content: &sdk.TextContent{Text: "hi there"}},
			}}, nil
		})
	text := func(body string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: body}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: "mem://readme", Name: "readme", MIMEType: "text/markdown", Description: "The readme."}, text("# Readme\nhello"))
	s.AddResource(&sdk.Resource{URI: "mem://big", Name: "big", MIMEType: "text/plain"}, text(strings.Repeat("x", maxResourceText+100)))
	s.AddResource(&sdk.Resource{URI: "mem://logo", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G', 0xff}}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: "mem://data.json", Name: "data", MIMEType: "application/json"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Blob: []byte(`{"a":1}`)}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "mem://notes/{name}", Name: "note"}, text("a note"))
}

func promptManager(t *testing.T) *Manager {
	t.Helper()
	url, _ := httpServer(t, func(s *sdk.Server) { addPromptsAndResources(s); addBasicTools(s, nil) })
	m := newManager(t, map[string]ServerConfig{"docs": {URL: url, Timeout: 10}}, Options{})
	m.Start(context.Background())
	if st := status(t, m, "docs"); st.State != StateConnected {
		t.Fatalf("status %+v", st)
	}
	return m
}

func TestPromptsAndResourcesAreListed(t *testing.T) {
	m := promptManager(t)
	ps := m.Prompts(context.Background())
	if len(ps) != 2 || ps[0].Name != "chat" || ps[1].Name != "review" {
		t.Fatalf("prompts %+v", ps)
	}
	r := ps[1]
	if r.Server != "docs" || r.Description != "Review a change. Carefully." || len(r.Arguments) != 2 ||
		r.Arguments[0] != (PromptArgument{Name: "pr", Description: "the pull request", Required: true}) || r.Arguments[1].Required {
		t.Errorf("review = %+v", r)
	}
	rs := m.Resources(context.Background())
	var uris []string
	for _, x := range rs {
		uris = append(uris, x.URI)
	}
	if got := strings.Join(uris, " "); got != "mem://big mem://data.json mem://logo mem://readme mem://notes/{name}" {
		t.Fatalf("resources %s", got)
	}
	if rs[3].MIMEType != "text/markdown" || rs[3].Description != "The readme." || rs[3].Template || !rs[4].Template {
		t.Errorf("resources %+v", rs)
	}
	if _, ok := m.LookupPrompt(context.Background(), "docs", "review"); !ok {
		t.Error("LookupPrompt did not find review")
	}
	if _, ok := m.LookupPrompt(context.Background(), "docs", "nope"); ok {
		t.Error("LookupPrompt found a prompt that does not exist")
	}
}

func TestGetPromptRendersItsMessages(t *testing.T) {
	m := promptManager(t)
	got, err := m.GetPrompt(context.Background(), "docs", "review", map[string]string{"pr": "42", "focus": "errors"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Review PR 42 focusing on errors.\n\n[resource mem://style, text/plain]\nUse tabs.\n\n[image image/png, 7 bytes, not shown]"
	if got != want {
		t.Errorf("prompt text:\n%s\nwant:\n%s", got, want)
	}
	got, err = m.GetPrompt(context.Background(), "docs", "chat", nil)
	if err != nil || got != "[user]\nhello\n\n[assistant]\nhi there" {
		t.Errorf("mixed roles: %q, %v", got, err)
	}
	if _, err := m.GetPrompt(context.Background(), "docs", "nope", nil); err == nil || !strings.Contains(err.Error(), `refused the request for the prompt "nope"`) {
		t.Errorf("unknown prompt: %v", err)
	}
	if _, err := m.GetPrompt(context.Background(), "other", "review", nil); err == nil || !strings.Contains(err.Error(), "the servers are: docs") {
		t.Errorf("unknown server: %v", err)
	}
}

func TestReadResourceGivesTextAndRefusesBinary(t *testing.T) {
	m := promptManager(t)
	ctx := context.Background()
	r, err := m.ReadResource(ctx, "docs", "mem://readme")
	if err != nil || r.Text != "# Readme\nhello" || r.MIMEType != "text/markdown" || r.Cut {
		t.Errorf("readme: %+v, %v", r, err)
	}
	r, err = m.ReadResource(ctx, "docs", "mem://data.json")
	if err != nil || r.Text != `{"a":1}` {
		t.Errorf("a JSON blob: %+v, %v", r, err)
	}
	r, err = m.ReadResource(ctx, "docs", "mem://big")
	if err != nil || !r.Cut || r.Size != maxResourceText+100 || len(r.Text) > maxResourceText+200 || !strings.HasSuffix(r.Text, "[the resource was cut at 65,536 of its 65,636 bytes]") {
		t.Errorf("big: cut %v size %d len %d tail %q, %v", r.Cut, r.Size, len(r.Text), r.Text[max(0, len(r.Text)-80):], err)
	}
	if _, err := m.ReadResource(ctx, "docs", "mem://logo"); err == nil || !strings.Contains(err.Error(), "is binary (image/png, 5 bytes)") {
		t.Errorf("binary: %v", err)
	}
	r, err = m.ReadResource(ctx, "docs", "mem://notes/todo")
	if err != nil || r.Text != "a note" {
		t.Errorf("from a template: %+v, %v", r, err)
	}
	if _, err := m.ReadResource(ctx, "docs", "mem://missing"); err == nil || !strings.Contains(err.Error(), `the MCP server "docs"`) {
		t.Errorf("missing: %v", err)
	}
}

// A prompt a server adds while connected is found: LookupPrompt lists the
// server again when the cached list lacks it.
func TestLookupPromptSeesAPromptAddedLater(t *testing.T) {
	var srv *sdk.Server
	say := func(s string) sdk.PromptHandler {
		return func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: s}}}}, nil
		}
	}
	url, _ := httpServer(t, func(s *sdk.Server) { srv = s; s.AddPrompt(&sdk.Prompt{Name: "first"}, say("first")) })
	m := newManager(t, map[string]ServerConfig{"grows": {URL: url, Timeout: 10}}, Options{})
	m.Start(context.Background())
	if ps := m.Prompts(context.Background()); len(ps) != 1 {
		t.Fatalf("prompts at first: %+v", ps)
	}
	srv.AddPrompt(&sdk.Prompt{Name: "later"}, say("later"))
	if _, ok := m.LookupPrompt(context.Background(), "grows", "later"); !ok {
		t.Fatal("the prompt added later was not found")
	}
}

// A server that is not connected has no prompts, and asking for one says
// why in one sentence.
func TestPromptsOfAServerThatIsNotRunning(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"off": {URL: "http://127.0.0.1:1", Disabled: true}}, Options{})
	if ps, rs := m.Prompts(context.Background()), m.Resources(context.Background()); len(ps)+len(rs) != 0 {
		t.Fatalf("%v %v", ps, rs)
	}
	if _, err := m.GetPrompt(context.Background(), "off", "x", nil); err == nil || !strings.Contains(err.Error(), "is disabled; enable it in Settings") {
		t.Errorf("disabled: %v", err)
	}
}

// A server that says its prompts changed is listed again at once, not
// after the cache's time runs out.
func TestPromptListChangedIsListedAgain(t *testing.T) {
	var srv *sdk.Server
	url, _ := httpServer(t, func(s *sdk.Server) { srv = s; addPromptsAndResources(s) })
	m := newManager(t, map[string]ServerConfig{"docs": {URL: url, Timeout: 10}}, Options{})
	m.Start(context.Background())
	if n := len(m.Prompts(context.Background())); n != 2 {
		t.Fatalf("%d prompts", n)
	}
	srv.AddPrompt(&sdk.Prompt{Name: "late", Description: "Added later."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "late"}}}}, nil
		})
	deadline := time.Now().Add(5 * time.Second)
	for len(m.Prompts(context.Background())) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the new prompt was not listed: %+v", m.Prompts(context.Background()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
