package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
)

// callThenSay is a model that calls the first offered tool whose name
// ends in suffix with args, then says the tool's result.
func callThenSay(suffix, args string) llmtest.Script {
	return llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply{Content: "result: " + last.Content}
		}
		for _, name := range r.Tools {
			if strings.HasSuffix(name, suffix) {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}}
			}
		}
		return llmtest.Reply{Content: "no tool " + suffix}
	})
}

// option returns the config option id of opts.
func option(t *testing.T, opts []acp.SessionConfigOption, id string) acp.SessionConfigOption {
	t.Helper()
	for _, o := range opts {
		if (o.Select != nil && string(o.Select.Id) == id) || (o.Boolean != nil && string(o.Boolean.Id) == id) {
			return o
		}
	}
	t.Fatalf("no config option %q in %+v", id, opts)
	return acp.SessionConfigOption{}
}

func setOption(h *harness, id acp.SessionId, config, value string) (acp.SetSessionConfigOptionResponse, error) {
	return h.conn.SetSessionConfigOption(context.Background(), acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: acp.SessionConfigId(config), Value: acp.SessionConfigValueId(value)}})
}

// TestConfigOptionsAreModeModelAndNetwork: a new session offers its mode,
// its model (the main connection's and each profile's) and its Network
// switch as config options; setting the model sends the next prompt to
// the profile's server, setting the mode is the session's mode, and an
// unknown option or value is refused with what to send.
func TestConfigOptionsAreModeModelAndNetwork(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("from main")))
	local := llmtest.New(llmtest.Sequence(llmtest.Text("from local")))
	t.Cleanup(local.Close)
	w, _, err := workbench.Open(f.data, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Settings().PutProfile(workbench.Profile{Name: "local", BaseURL: local.URL(), Model: "qwen3-8b"})
	if err == nil {
		err = w.SaveSettings(s)
	}
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	h := f.connect(t, "")
	created := f.newSession(t, h)
	id := created.SessionId
	mode := option(t, created.ConfigOptions, configMode)
	if mode.Select.CurrentValue != "ask" || *mode.Select.Category != acp.SessionConfigOptionCategoryMode {
		t.Errorf("the mode option is %+v", mode.Select)
	}
	model := option(t, created.ConfigOptions, configModel)
	if model.Select.CurrentValue != "main/deepseek-chat" || *model.Select.Category != acp.SessionConfigOptionCategoryModel {
		t.Errorf("the model option is %+v", model.Select)
	}
	var values []string
	for _, v := range *model.Select.Options.Ungrouped {
		values = append(values, string(v.Value))
	}
	if !strings.Contains(strings.Join(values, " "), "local/qwen3-8b") {
		t.Errorf("the model option does not offer the profile: %v", values)
	}
	network := option(t, created.ConfigOptions, configNetwork)
	if network.Select == nil || network.Select.CurrentValue != "off" {
		t.Errorf("the Network switch of a client without boolean options is not an off selector: %+v", network)
	}

	prompt(t, h, id, "hello")
	resp, err := setOption(h, id, configModel, "local/qwen3-8b")
	if err != nil {
		t.Fatal(err)
	}
	if got := option(t, resp.ConfigOptions, configModel).Select.CurrentValue; got != "local/qwen3-8b" {
		t.Errorf("after the switch the model option says %q", got)
	}
	prompt(t, h, id, "and now?")
	if !strings.Contains(summarize(h.client.take()).text, "from local") || len(local.Requests()) != 1 {
		t.Errorf("the prompt after the switch did not go to the profile's server (%d requests)", len(local.Requests()))
	}

	resp, err = setOption(h, id, configMode, "read-only")
	if err != nil {
		t.Fatal(err)
	}
	if got := option(t, resp.ConfigOptions, configMode).Select.CurrentValue; got != "read-only" {
		t.Errorf("after setting the mode the option says %q", got)
	}
	var told bool
	for _, u := range h.client.take() {
		told = told || (u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "read-only")
	}
	if !told {
		t.Error("setting the mode option sent no current_mode_update")
	}
	for _, bad := range [][2]string{{"colour", "blue"}, {configMode, "yolo"}, {configModel, "nonsense"}, {configNetwork, "maybe"}} {
		if _, err := setOption(h, id, bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s was accepted", bad[0], bad[1])
		}
	}
	if _, err := setOption(h, "no-such-session", configMode, "ask"); err == nil {
		t.Error("an option of a session that is not open was set")
	}
}

// TestBooleanOptionsFollowTheClient: the Network switch is a boolean
// toggle for a client that advertised clientCapabilities.session
// .configOptions.boolean at initialize.
func TestBooleanOptionsFollowTheClient(t *testing.T) {
	l := newLedger()
	l.reading(rpcMessage{Method: acp.AgentMethodInitialize, Params: json.RawMessage(`{"protocolVersion":1,"clientCapabilities":{"session":{"configOptions":{"boolean":{}}}}}`)})
	if !l.booleanOptions() {
		t.Error("the boolean capability was not seen")
	}
	l.reading(rpcMessage{Method: acp.AgentMethodInitialize, Params: json.RawMessage(`{"protocolVersion":1,"clientCapabilities":{"session":{"configOptions":{"boolean":null}}}}`)})
	if l.booleanOptions() {
		t.Error("a null boolean capability was taken as one")
	}
	st := &session{srv: &Server{ledger: l}}
	if o := st.networkOption(true); o.Select == nil || o.Select.CurrentValue != "on" {
		t.Errorf("the Network switch without the capability is %+v", o)
	}
	l.booleans = true
	if o := st.networkOption(true); o.Boolean == nil || !o.Boolean.CurrentValue || o.Boolean.Id != configNetwork {
		t.Errorf("the Network switch with the capability is %+v", o)
	}
}

// TestNetworkSwitchLetsWebFetchReachThePage: with the Network switch off
// web_fetch is refused and the editor is told how to switch it on; set on
// through the config option, the same fetch brings the page.
func TestNetworkSwitchLetsWebFetchReachThePage(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Loopback page</h1><p>Served for the test.</p></body></html>")
	}))
	t.Cleanup(page.Close)
	f := newFixtureWith(t, callThenSay("web_fetch", fmt.Sprintf(`{"url":%q}`, page.URL)))
	f.fetchLocal = true
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "fetch the page")
	off := h.client.take()
	if !strings.Contains(toolText(off), NetworkNote) {
		t.Errorf("the refused fetch does not say how to switch Network on:\n%s", toolText(off))
	}
	resp, err := setOption(h, id, configNetwork, "on")
	if err != nil {
		t.Fatal(err)
	}
	if got := option(t, resp.ConfigOptions, configNetwork).Select.CurrentValue; got != "on" {
		t.Errorf("after switching Network on the option says %q", got)
	}
	prompt(t, h, id, "fetch the page")
	on := h.client.take()
	if !strings.Contains(summarize(on).text, "Loopback page") {
		t.Errorf("the fetch with Network on did not bring the page:\n%s\n%s", summarize(on).text, toolText(on))
	}

	// tally acp --network on: a new session starts with it on.
	h.close()
	f.network = "on"
	h2 := f.connect(t, "")
	created := f.newSession(t, h2)
	if got := option(t, created.ConfigOptions, configNetwork).Select.CurrentValue; got != "on" {
		t.Errorf("with Options.Network on, a new session's switch is %q", got)
	}
}

// toolText is the text of every tool call's content in updates.
func toolText(updates []acp.SessionUpdate) string {
	var b strings.Builder
	add := func(cs []acp.ToolCallContent) {
		for _, c := range cs {
			if c.Content != nil && c.Content.Content.Text != nil {
				b.WriteString(c.Content.Content.Text.Text + "\n")
			}
		}
	}
	for _, u := range updates {
		switch {
		case u.ToolCall != nil:
			add(u.ToolCall.Content)
		case u.ToolCallUpdate != nil:
			add(u.ToolCallUpdate.Content)
		}
	}
	return b.String()
}

// TestUsageCarriesTheLedgersLevelAndCost: each response's usage_update is
// the ledger's context level against the window and the session's cost
// so far in US dollars, with the ledger's counts under _meta.tally; a
// loaded session shows its level and cost at once.
func TestUsageCarriesTheLedgersLevelAndCost(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("one"), llmtest.Text("two")))
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "hello")
	prompt(t, h, id, "again")
	var last *acp.SessionUsageUpdate
	var costs []float64
	for _, u := range h.client.take() {
		if u.UsageUpdate != nil {
			last = u.UsageUpdate
			if u.UsageUpdate.Cost != nil {
				costs = append(costs, u.UsageUpdate.Cost.Amount)
			}
		}
	}
	if last == nil {
		t.Fatal("no usage_update")
	}
	if last.Used <= 0 || last.Size <= last.Used {
		t.Errorf("the level is %d of %d", last.Used, last.Size)
	}
	if last.Cost == nil || last.Cost.Currency != "USD" || last.Cost.Amount <= 0 {
		t.Fatalf("the usage has no cost in USD: %+v", last.Cost)
	}
	if len(costs) < 2 || costs[len(costs)-1] <= costs[0] {
		t.Errorf("the cost is not the session's running total: %v", costs)
	}
	figures, _ := last.Meta["tally"].(map[string]any)
	if n, _ := figures["requests"].(float64); n != 2 {
		t.Errorf("_meta.tally says %v requests, want 2: %v", figures["requests"], figures)
	}
	h.close()

	h2 := f.connect(t, "")
	if _, err := h2.conn.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: id, Cwd: f.ws}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		for _, u := range h2.client.take() {
			if u.UsageUpdate != nil && u.UsageUpdate.Cost != nil && u.UsageUpdate.Cost.Amount == last.Cost.Amount {
				return true
			}
		}
		return false
	}, "a resumed session's level and cost")
}

// signupServer is an MCP server over HTTP whose tool "signup" asks the
// user for a form and reports what came back.
func signupServer(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "forms", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "signup", Description: "Sign the user up."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, ok := req.Params.InputResponses["who"].(*sdk.ElicitResult)
			if !ok { // ask: an input request, elicitation/create for an older client
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"who": &sdk.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(`{"type":"object",
				"properties":{"name":{"type":"string","title":"Name"},
				"plan":{"type":"string","oneOf":[{"const":"free","title":"Free"},{"const":"pro","title":"Pro"}],"default":"free"},
				"seats":{"type":"integer","minimum":1,"maximum":9}},"required":["name"]}`)}}}, nil, nil
			}
			text := fmt.Sprintf("action=%s name=%v plan=%v seats=%v", res.Action, res.Content["name"], res.Content["plan"], res.Content["seats"])
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestAnMCPFormIsAskedOfTheEditor: a form an MCP server asks for during a
// tool call reaches a client that offers form elicitation as
// elicitation/create, with the form's fields as the requested schema,
// and its answers reach the server; a client that does not offer it never
// sees the form, which is declined.
func TestAnMCPFormIsAskedOfTheEditor(t *testing.T) {
	for _, offered := range []bool{true, false} {
		t.Run(fmt.Sprint("offered=", offered), func(t *testing.T) {
			f := newFixtureWith(t, callThenSay("__signup", `{}`))
			f.forms = offered
			url := signupServer(t) // closed after the connection
			h := f.connect(t, "")
			h.client.elicit = func(acp.UnstableCreateElicitationRequest) acp.UnstableCreateElicitationResponse {
				return acp.UnstableCreateElicitationResponse{Accept: &acp.UnstableCreateElicitationAccept{Action: "accept",
					Content: map[string]any{"name": "Ada", "plan": "pro", "seats": 3}}}
			}
			resp, err := h.conn.NewSession(ctx(t), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{
				{Http: &acp.McpServerHttpInline{Name: "forms", Url: url, Headers: []acp.HttpHeader{}}}}})
			if err != nil {
				t.Fatal(err)
			}
			prompt(t, h, resp.SessionId, "sign me up")
			text := summarize(h.client.take()).text
			h.client.mu.Lock()
			forms := h.client.forms
			h.client.mu.Unlock()
			if !offered {
				if len(forms) != 0 || !strings.Contains(text, "action=decline") {
					t.Errorf("a client without form elicitation was asked %d forms; the model got %q", len(forms), text)
				}
				return
			}
			if len(forms) != 1 || forms[0].Form == nil {
				t.Fatalf("%d forms asked, want one in form mode: %+v", len(forms), forms)
			}
			fm := forms[0].Form
			if !strings.Contains(fm.Message, `"forms"`) || !strings.Contains(fm.Message, "Who are you?") {
				t.Errorf("the form's message is %q", fm.Message)
			}
			plan, _ := fm.RequestedSchema.Properties["plan"].(map[string]any)
			if plan["type"] != "string" || plan["oneOf"] == nil || plan["default"] != "free" || len(fm.RequestedSchema.Required) != 1 {
				t.Errorf("the requested schema is %+v", fm.RequestedSchema)
			}
			if !strings.Contains(text, "action=accept name=Ada plan=pro seats=3") {
				t.Errorf("the server did not get the answers: %q", text)
			}
		})
	}
}

// TestElicitationIsScopedToTheSession: the writer moves the session scope
// the request carries in _meta to its params, where the protocol wants
// it, and leaves every other line as it is.
func TestElicitationIsScopedToTheSession(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"m","mode":"form","requestedSchema":{"type":"object","properties":{}},"_meta":{"tally/scope":{"sessionId":"s1"}}}}` + "\n")
	var got struct {
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(scoped(line), &got); err != nil {
		t.Fatal(err)
	}
	if got.Params["sessionId"] != "s1" || got.Params["_meta"] != nil || got.Params["mode"] != "form" {
		t.Errorf("the scoped params are %v", got.Params)
	}
	other := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"text":"tally/scope"}}` + "\n")
	if string(scoped(other)) != string(other) {
		t.Error("a line that is not an elicitation was changed")
	}
}

// TestCloseAndDeleteSession: session/close ends the session on the
// connection (a prompt then says to open it again); session/delete
// removes it from the store, so it is no longer listed; deleting an
// unknown session is an error.
func TestCloseAndDeleteSession(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("hi")))
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "hello")
	if _, err := h.conn.CloseSession(ctx(t), acp.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("still there?")}}); err == nil || !strings.Contains(err.Error(), "session/load") {
		t.Errorf("a prompt to a closed session: %v", err)
	}
	id2 := f.newSession(t, h).SessionId // open while it is deleted
	for _, sid := range []acp.SessionId{id, id2} {
		if _, err := h.conn.UnstableDeleteSession(ctx(t), acp.UnstableDeleteSessionRequest{SessionId: sid}); err != nil {
			t.Fatalf("delete %s: %v", sid, err)
		}
	}
	list, err := h.conn.ListSessions(ctx(t), acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 0 {
		t.Errorf("deleted sessions are still listed: %+v", list.Sessions)
	}
	if _, err := h.conn.UnstableDeleteSession(ctx(t), acp.UnstableDeleteSessionRequest{SessionId: id}); err == nil {
		t.Error("deleting a deleted session succeeded")
	}
}

// TestChunksCarryMessageIDs: the chunks of one reply share a message ID,
// a UUID, and the next reply has another.
func TestChunksCarryMessageIDs(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("first reply"), llmtest.Text("second reply")))
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	var ids []string
	for _, p := range []string{"one", "two"} {
		prompt(t, h, id, p)
		seen := map[string]bool{}
		for _, u := range h.client.take() {
			if c := u.AgentMessageChunk; c != nil {
				if c.MessageId == nil || len(*c.MessageId) != 36 {
					t.Fatalf("a chunk without a UUID message ID: %+v", c)
				}
				seen[*c.MessageId] = true
			}
		}
		if len(seen) != 1 {
			t.Fatalf("one reply's chunks carry %d message IDs", len(seen))
		}
		for k := range seen {
			ids = append(ids, k)
		}
	}
	if ids[0] == ids[1] {
		t.Error("two replies share a message ID")
	}
}

// waitFor polls ok for up to ten seconds, failing the test with what
// never came.
func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for range 200 {
		if ok() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never came", what)
}

// TestCancelRequestStopsThePrompt: $/cancel_request of a session/prompt
// (the SDK sends it when the request's context ends) stops the turn as
// session/cancel does: the approval it waited for is denied, so the edit
// is not made, and the session takes the next prompt.
func TestCancelRequestStopsThePrompt(t *testing.T) {
	f := newFixture(t)
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	pctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.client.answer = func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		cancel()
		time.Sleep(300 * time.Millisecond) // the cancellation arrives first
		return selected(optionAllow)
	}
	if _, err := h.conn.Prompt(pctx, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(demo.Prompt)}}); err == nil {
		t.Fatal("the cancelled prompt answered without an error")
	}
	h.client.answer = func(acp.RequestPermissionRequest) acp.RequestPermissionResponse { return selected(optionReject) }
	prompt(t, h, id, "hello")
	if strings.Contains(f.read(t, "calc/calc.go"), "return a + b") {
		t.Error("the edit approved after $/cancel_request was made")
	}
}
