package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// docsMCPServer serves the prompt "review" (pr required) and the resource
// "mem://notes.md" over streamable HTTP and returns its URL.
func docsMCPServer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	s.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a pull request.", Arguments: []*sdk.PromptArgument{
		{Name: "pr", Description: "the pull request number", Required: true},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user",
			Content: &sdk.TextContent{Text: "Review pull request " + req.Params.Arguments["pr"] + " carefully."}}}}, nil
	})
	s.AddResource(&sdk.Resource{URI: "mem://notes.md", Name: "notes", MIMEType: "text/markdown", Description: "The team's notes."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "ship on Friday"}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// `tally run "/server:prompt args"` sends the prompt's text, with the
// resources its @server:uri tokens attach; `tally mcp list --probe` lists
// both.
func TestRunExpandsAnMCPPromptAndAttachesAResource(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	var sent []string
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		sent = append(sent, req.LastHuman())
		return llmtest.Text("ok")
	}))
	t.Cleanup(srv.Close)
	data, ws := t.TempDir(), t.TempDir()
	if _, errOut, code := runCLI(t, "mcp", "add", "docs", "--url", docsMCPServer(t)); code != ExitOK {
		t.Fatalf("add: exit %d, %q", code, errOut)
	}
	out, errOut, code := runCLI(t, "mcp", "list", "--probe", "--data", data, "--workspace", ws)
	if code != ExitOK || !strings.Contains(out, "  /docs:review <pr>: Review a pull request.\n") ||
		!strings.Contains(out, "  @docs:mem://notes.md (text/markdown): The team's notes.\n") {
		t.Errorf("list --probe: exit %d, %q %q", code, out, errOut)
	}
	run := func(prompt string) (string, int) {
		_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "test-model", "--workspace", ws, prompt)
		return errOut, code
	}
	if errOut, code := run("/docs:review 42 @docs:mem://notes.md"); code != ExitOK {
		t.Fatalf("run: exit %d, %q", code, errOut)
	}
	if len(sent) != 1 || !strings.Contains(sent[0], "Review pull request 42 carefully.") ||
		!strings.Contains(sent[0], "<attachment server=\"docs\" uri=\"mem://notes.md\" type=\"text/markdown\">\nship on Friday\n</attachment>") {
		t.Fatalf("the model got %q", sent)
	}
	errOut, code = run("/docs:review")
	if code != ExitFail || !strings.Contains(errOut, "the command /docs:review needs the argument pr") || len(sent) != 1 {
		t.Errorf("a missing argument: exit %d, %q, %d requests", code, errOut, len(sent))
	}
}
