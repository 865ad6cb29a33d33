package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// signupSchema is a form with a default for every field.
const signupSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","default":"John Doe"},
	"age":{"type":"integer","minimum":0,"maximum":150,"default":30},
	"plan":{"type":"string","enum":["free","pro","team"],"default":"free"},
	"news":{"type":"boolean","title":"Newsletter","default":true}},"required":["name"]}`

// formMCPServer serves an MCP server whose tool "signup" asks for the form
// schema and returns the action and the answers it got.
func formMCPServer(t *testing.T, schema string) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "forms", Version: "1"}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true} // runs without approval where the user allows it
	sdk.AddTool(s, &sdk.Tool{Name: "signup", Description: "Sign the user up.", Annotations: ro},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Sign up?", RequestedSchema: json.RawMessage(schema)})
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

// addFormServer configures the form server as "forms" in a fresh user
// MCP file, its read-only tools allowed, and returns the data and
// workspace folders.
func addFormServer(t *testing.T, schema string) (data, ws string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	file := filepath.Join(home, "tally", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	conf := `{"mcpServers": {"forms": {"url": "` + formMCPServer(t, schema) + `", "allowReadOnly": true}}}`
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return t.TempDir(), t.TempDir()
}

func TestMCPCallYesAcceptsTheFormDefaults(t *testing.T) {
	data, ws := addFormServer(t, signupSchema)
	out, errOut, code := runCLI(t, "mcp", "call", "forms", "signup", "--yes", "--data", data, "--workspace", ws)
	if code != ExitOK || !strings.Contains(out, `got accept {"age":30,"name":"John Doe","news":true,"plan":"free"}`) {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	if !strings.Contains(errOut, `accepted the form of the MCP server "forms" ("Sign up?") with its defaults (--yes)`) {
		t.Errorf("stderr %q does not say the defaults were accepted", errOut)
	}
}

func TestMCPCallYesFailsOnARequiredFieldWithoutDefault(t *testing.T) {
	data, ws := addFormServer(t, `{"type":"object","properties":{"email":{"type":"string","title":"Email"}},"required":["email"]}`)
	out, errOut, code := runCLI(t, "mcp", "call", "forms", "signup", "--yes", "--data", data, "--workspace", ws)
	if code != ExitFail || !strings.Contains(out, "got decline") {
		t.Fatalf("exit %d, out %q", code, out)
	}
	if !strings.Contains(errOut, `--yes cannot answer the form of the MCP server "forms" ("Sign up?"): the form's field "Email" is required and has no default`) {
		t.Errorf("stderr %q does not say why", errOut)
	}
}

func TestMCPCallDeclinesAFormWithoutATerminal(t *testing.T) {
	data, ws := addFormServer(t, signupSchema)
	out, errOut, code := runCLI(t, "mcp", "call", "forms", "signup", "--data", data, "--workspace", ws)
	if code != ExitOK || !strings.Contains(out, "got decline") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "standard input is not a terminal to ask on, so it was declined; run on a terminal to fill it in, or accept its defaults with --yes") {
		t.Errorf("stderr %q does not say why the form was declined", errOut)
	}
}

// `tally run` answers a session's forms as `tally mcp call` does: headless
// it declines them saying why, with --yes it accepts the defaults.
func TestRunAnswersFormsHeadlessAndWithYes(t *testing.T) {
	data, ws := addFormServer(t, signupSchema)
	t.Setenv("OPENAI_API_KEY", "")
	var results []string
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			results = append(results, last.Content)
			return llmtest.Text("done")
		}
		return llmtest.Call("mcp__forms__signup", `{}`)
	}))
	t.Cleanup(srv.Close)
	run := func(extra ...string) string {
		t.Helper()
		args := append([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "test-model", "--workspace", ws}, extra...)
		_, errOut, code := runCLI(t, append(args, "sign me up")...)
		if code != ExitOK {
			t.Fatalf("run %v: exit %d, %q", extra, code, errOut)
		}
		return errOut
	}
	errOut := run("--yes")
	if len(results) != 1 || !strings.Contains(results[0], `got accept {"age":30,"name":"John Doe","news":true,"plan":"free"}`) ||
		!strings.Contains(errOut, "tally run: accepted the form") {
		t.Fatalf("--yes: results %q, stderr %q", results, errOut)
	}
	errOut = run()
	if len(results) != 2 || !strings.Contains(results[1], "got decline") || !strings.Contains(errOut, "standard input is not a terminal to ask on") {
		t.Errorf("headless: results %q, stderr %q", results, errOut)
	}
}
