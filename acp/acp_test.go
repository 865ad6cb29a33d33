package acp

import (
	"encoding/base64"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/tool"
)

// fixAnswer allows the edit once and rejects the test run, as a user
// reviewing the change but not wanting commands run.
func fixAnswer(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	if p.ToolCall.Kind != nil && *p.ToolCall.Kind == acp.ToolKindExecute {
		return selected(optionReject)
	}
	return selected(optionAllow)
}

// summary is what a turn's updates showed.
type summary struct {
	text, thought string
	calls         map[acp.ToolCallId]*acp.SessionUpdateToolCall
	status        map[acp.ToolCallId]acp.ToolCallStatus
	plan          []acp.PlanEntry
	title         string
	usage         int
	user          string
	commands      int
}

func summarize(updates []acp.SessionUpdate) summary {
	s := summary{calls: map[acp.ToolCallId]*acp.SessionUpdateToolCall{}, status: map[acp.ToolCallId]acp.ToolCallStatus{}}
	for _, u := range updates {
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			s.text += u.AgentMessageChunk.Content.Text.Text
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			s.thought += u.AgentThoughtChunk.Content.Text.Text
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			s.user += u.UserMessageChunk.Content.Text.Text
		case u.ToolCall != nil:
			s.calls[u.ToolCall.ToolCallId] = u.ToolCall
			s.status[u.ToolCall.ToolCallId] = u.ToolCall.Status
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
			s.status[u.ToolCallUpdate.ToolCallId] = *u.ToolCallUpdate.Status
		case u.Plan != nil:
			s.plan = u.Plan.Entries
		case u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil:
			s.title = *u.SessionInfoUpdate.Title
		case u.UsageUpdate != nil:
			s.usage = u.UsageUpdate.Used
		case u.AvailableCommandsUpdate != nil:
			s.commands = len(u.AvailableCommandsUpdate.AvailableCommands)
		}
	}
	return s
}

// byKind returns the announced call of kind k.
func (s summary) byKind(k acp.ToolKind) *acp.SessionUpdateToolCall {
	for _, c := range s.calls {
		if c.Kind == k {
			return c
		}
	}
	return nil
}

func editDiff(t *testing.T, c *acp.SessionUpdateToolCall) *acp.ToolCallContentDiff {
	t.Helper()
	for _, cc := range c.Content {
		if cc.Diff != nil {
			return cc.Diff
		}
	}
	t.Fatalf("the edit %q has no diff content: %+v", c.Title, c.Content)
	return nil
}

// TestPromptStreamsTheTurnAndAsksBeforeTheEdit drives the demo's fix story
// through the protocol: the reply streams, the edit shows as a tool call
// with the whole file's diff and asks first, the checklist is the plan,
// and the rejected test run fails without running.
func TestPromptStreamsTheTurnAndAsksBeforeTheEdit(t *testing.T) {
	f := newFixture(t)
	h := f.connect(t, "")
	h.client.answer = fixAnswer
	sess := f.newSession(t, h)
	if sess.Modes == nil || sess.Modes.CurrentModeId != acp.SessionModeId(tool.ModeAsk) {
		t.Fatalf("modes = %+v, want the current mode ask", sess.Modes)
	}
	resp := prompt(t, h, sess.SessionId, demo.Prompt)
	if resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop reason %q, want end_turn", resp.StopReason)
	}
	s := summarize(h.client.take())
	if !strings.Contains(s.text, "Fixed, not tested") || !strings.Contains(s.thought, "Add") {
		t.Errorf("streamed text %q, reasoning %q: want the story's answer and its reasoning", s.text, s.thought)
	}
	edit := s.byKind(acp.ToolKindEdit)
	if edit == nil {
		t.Fatalf("no edit tool call among %d calls", len(s.calls))
	}
	d := editDiff(t, edit)
	if d.Path != f.ws+"/calc/calc.go" || d.OldText == nil || !strings.Contains(*d.OldText, "return a - b") || !strings.Contains(d.NewText, "return a + b") {
		t.Errorf("edit diff path %q old %v new %q: want calc/calc.go from a - b to a + b", d.Path, d.OldText, d.NewText)
	}
	if got := s.status[edit.ToolCallId]; got != acp.ToolCallStatusCompleted {
		t.Errorf("the edit ended %q, want completed", got)
	}
	if !strings.Contains(f.read(t, "calc/calc.go"), "return a + b") {
		t.Error("the approved edit was not written")
	}
	run := s.byKind(acp.ToolKindExecute)
	if run == nil || s.status[run.ToolCallId] != acp.ToolCallStatusFailed {
		t.Errorf("the rejected test run: %+v, status %q; want a failed execute call", run, s.status[run.ToolCallId])
	}
	if len(s.plan) != 3 || s.plan[0].Content != "Find the bug in Add" || s.plan[0].Status != acp.PlanEntryStatusCompleted ||
		s.plan[2].Status != acp.PlanEntryStatusInProgress {
		t.Errorf("plan = %+v, want the story's three items, the first completed and the tests in progress", s.plan)
	}
	if s.title == "" || s.usage <= 0 {
		t.Errorf("title %q, context level %d: want the first prompt as the title and a level", s.title, s.usage)
	}
	for _, c := range s.calls {
		if strings.Contains(c.Title, "checklist") {
			t.Errorf("the checklist tool shows as a call %q; it is the plan", c.Title)
		}
	}
	asked := h.client.permissions()
	if len(asked) != 2 {
		t.Fatalf("%d permission requests, want the edit's and the test run's", len(asked))
	}
	var ids []string
	for _, o := range asked[0].Options {
		ids = append(ids, string(o.OptionId)+"/"+string(o.Kind))
	}
	if got := strings.Join(ids, " "); got != "allow_once/allow_once allow_always/allow_always reject_once/reject_once" {
		t.Errorf("the edit's options are %s", got)
	}
	if asked[0].ToolCall.ToolCallId != edit.ToolCallId || len(asked[0].ToolCall.Content) == 0 || asked[0].ToolCall.Content[0].Diff == nil {
		t.Errorf("the edit's permission request names %q with content %+v; want the announced call with its diff", asked[0].ToolCall.ToolCallId, asked[0].ToolCall.Content)
	}
}

// TestLoadReplaysTheConversation opens the session of an earlier
// connection: the history and the plan come back before the answer, and
// the next turn continues it.
func TestLoadReplaysTheConversation(t *testing.T) {
	f := newFixture(t)
	h := f.connect(t, "")
	h.client.answer = fixAnswer
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, demo.Prompt)
	h.close()

	h2 := f.connect(t, "")
	resp, err := h2.conn.LoadSession(ctx(t), acp.LoadSessionRequest{SessionId: id, Cwd: f.ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != acp.SessionModeId(tool.ModeAsk) {
		t.Errorf("modes = %+v", resp.Modes)
	}
	s := summarize(h2.client.take())
	if s.user != demo.Prompt {
		t.Errorf("replayed user text %q, want the prompt", s.user)
	}
	if !strings.Contains(s.text, "Fixed, not tested") {
		t.Errorf("replayed reply %q", s.text)
	}
	edit := s.byKind(acp.ToolKindEdit)
	if edit == nil || edit.Status != acp.ToolCallStatusCompleted {
		t.Fatalf("replayed edit %+v, want a completed call", edit)
	}
	if d := editDiff(t, edit); d.OldText == nil || !strings.Contains(*d.OldText, "a - b") {
		t.Errorf("replayed diff %+v", d)
	}
	if len(s.plan) != 3 {
		t.Errorf("replayed plan %+v", s.plan)
	}
	if _, err := h2.conn.LoadSession(ctx(t), acp.LoadSessionRequest{SessionId: "missing-session", Cwd: f.ws, McpServers: []acp.McpServer{}}); err == nil {
		t.Error("loading a session that does not exist succeeded")
	}
	list, err := h2.conn.ListSessions(ctx(t), acp.ListSessionsRequest{Cwd: acp.Ptr(f.ws)})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Title == nil {
		t.Errorf("session/list = %+v, %v; want the one session with its title", list, err)
	}
}

// TestCancelWhileAskingEndsTheTurnCancelled cancels the turn while its
// edit waits for the user: the answer is "cancelled", as the protocol
// requires, and nothing is written.
func TestCancelWhileAskingEndsTheTurnCancelled(t *testing.T) {
	f := newFixture(t)
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	h.client.answer = func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		if err := h.conn.Cancel(ctx(t), acp.CancelNotification{SessionId: id}); err != nil {
			t.Error(err)
		}
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	}
	resp := prompt(t, h, id, demo.Prompt)
	if resp.StopReason != acp.StopReasonCancelled {
		t.Fatalf("stop reason %q, want cancelled", resp.StopReason)
	}
	if strings.Contains(f.read(t, "calc/calc.go"), "return a + b") {
		t.Error("the edit was written although the turn was cancelled while asking")
	}
	// The session goes on: the next prompt runs.
	h.client.answer = fixAnswer
	if resp := prompt(t, h, id, demo.Prompt); resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("the prompt after the cancelled one stopped %q", resp.StopReason)
	}
}

// TestModesAreThePermissionModes switches the session to auto-edit: the
// edit no longer asks; an unknown mode is refused.
func TestModesAreThePermissionModes(t *testing.T) {
	f := newFixture(t)
	h := f.connect(t, "")
	h.client.answer = fixAnswer
	id := f.newSession(t, h).SessionId
	if _, err := h.conn.SetSessionMode(ctx(t), acp.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	if _, err := h.conn.SetSessionMode(ctx(t), acp.SetSessionModeRequest{SessionId: id, ModeId: acp.SessionModeId(tool.ModeAutoEdit)}); err != nil {
		t.Fatal(err)
	}
	prompt(t, h, id, demo.Prompt)
	for _, p := range h.client.permissions() {
		if p.ToolCall.Kind != nil && *p.ToolCall.Kind == acp.ToolKindEdit {
			t.Error("the edit asked in auto-edit mode")
		}
	}
	if !strings.Contains(f.read(t, "calc/calc.go"), "return a + b") {
		t.Error("the edit was not applied in auto-edit mode")
	}
}

// TestPromptBlocksBecomeOneMessage: links become workspace paths and
// embedded files fenced blocks under their path.
func TestPromptBlocksBecomeOneMessage(t *testing.T) {
	ws := "/home/me/project"
	got, imgs, err := promptText([]acp.ContentBlock{
		acp.TextBlock("Look at"),
		acp.ResourceLinkBlock("calc.go", "file:///home/me/project/calc/calc.go"),
		acp.TextBlock("and this:"),
		acp.ResourceBlock(acp.EmbeddedResourceResource{TextResourceContents: &acp.TextResourceContents{Uri: "file:///etc/hosts", Text: "127.0.0.1 localhost\n"}}),
	}, ws)
	if err != nil {
		t.Fatal(err)
	}
	want := "Look at @calc/calc.go and this:\n\n/etc/hosts:\n```\n127.0.0.1 localhost\n```\n"
	if got != want || len(imgs) != 0 {
		t.Errorf("got %q (%d images)\nwant %q", got, len(imgs), want)
	}
	// A picture goes beside the text, decoded; audio and bad data are refused.
	png := []byte("\x89PNG\r\n\x1a\nrest")
	got, imgs, err = promptText([]acp.ContentBlock{acp.TextBlock("what is this?"), acp.ImageBlock(base64.StdEncoding.EncodeToString(png), "image/png")}, ws)
	if err != nil || got != "what is this?" || len(imgs) != 1 || string(imgs[0].Data) != string(png) {
		t.Errorf("an image: %q, %+v, %v", got, imgs, err)
	}
	if _, _, err := promptText([]acp.ContentBlock{acp.ImageBlock("not base64!", "image/png")}, ws); err == nil {
		t.Error("an image with bad data was accepted")
	}
	if _, _, err := promptText([]acp.ContentBlock{acp.AudioBlock("AAAA", "audio/wav")}, ws); err == nil {
		t.Error("audio was accepted")
	}
}

// TestEditorMCPServersJoinTheUsers: the servers the client passes run
// beside the user's; a name the user's file has keeps the user's server.
func TestEditorMCPServersJoinTheUsers(t *testing.T) {
	s := newServer(Options{})
	cfg := agent.Config{MCP: agent.MCPOptions{User: &mcp.Config{Servers: map[string]mcp.ServerConfig{
		"docs": {Command: "my-docs"},
	}}}}
	s.addMCP(&cfg, []acp.McpServer{
		{Stdio: &acp.McpServerStdio{Name: "docs", Command: "editor-docs"}},
		{Stdio: &acp.McpServerStdio{Name: "db", Command: "db-mcp", Args: []string{"--ro"}, Env: []acp.EnvVariable{{Name: "DB", Value: "x"}}}},
		{Http: &acp.McpServerHttpInline{Name: "web", Url: "https://example.invalid/mcp", Headers: []acp.HttpHeader{{Name: "A", Value: "b"}}}},
		{Stdio: &acp.McpServerStdio{Name: "", Command: "nameless"}},
	})
	got := cfg.MCP.User.Servers
	if len(got) != 3 || got["docs"].Command != "my-docs" || got["db"].Command != "db-mcp" || got["db"].Env["DB"] != "x" ||
		got["web"].URL != "https://example.invalid/mcp" || got["web"].Headers["A"] != "b" {
		t.Errorf("servers = %+v", got)
	}
}

// TestASubagentsEditAsksAndEnds: a general sub-agent's edit, a call the
// client never saw start, is announced with its hunks when it asks, and
// ends completed when the sub-agent's result comes.
func TestASubagentsEditAsksAndEnds(t *testing.T) {
	f := newFixtureWith(t, llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if strings.HasPrefix(req.Messages[0].Content, "# Sub-agent:") {
			if req.ToolResultsSinceHuman() == 0 {
				return llmtest.Call("edit_file", `{"path":"calc/calc.go","old_string":"\treturn a - b","new_string":"\treturn a + b"}`)
			}
			return llmtest.Reply{Content: "Changed Add to return a + b."}
		}
		if req.ToolResultsSinceHuman() == 0 {
			return llmtest.Call("task", `{"description":"Fix Add","prompt":"Make calc.Add return a + b.","kind":"general"}`)
		}
		return llmtest.Reply{Content: "The sub-agent fixed Add."}
	}))
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	if resp := prompt(t, h, id, "Fix Add with a sub-agent."); resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	asked := h.client.permissions()
	if len(asked) != 1 || !strings.Contains(*asked[0].ToolCall.Title, "sub-agent") || len(asked[0].ToolCall.Content) == 0 || asked[0].ToolCall.Content[0].Diff == nil {
		t.Fatalf("permission requests %+v; want the sub-agent's edit with its hunks", asked)
	}
	s := summarize(h.client.take())
	child := asked[0].ToolCall.ToolCallId
	if _, announced := s.calls[child]; !announced || s.status[child] != acp.ToolCallStatusCompleted {
		t.Errorf("the sub-agent's edit: announced %v, status %q; want announced and completed", announced, s.status[child])
	}
	task := s.byKind(acp.ToolKindThink)
	if task == nil || s.status[task.ToolCallId] != acp.ToolCallStatusCompleted {
		t.Errorf("the task call %+v ended %q", task, s.status[task.ToolCallId])
	}
	if !strings.Contains(f.read(t, "calc/calc.go"), "return a + b") {
		t.Error("the sub-agent's approved edit was not written")
	}
}

// TestCancelledOutcomeAloneStopsTheTurn: a client that answers
// "cancelled" stops the turn even when its session/cancel has not
// arrived (or never comes).
func TestCancelledOutcomeAloneStopsTheTurn(t *testing.T) {
	f := newFixture(t)
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	h.client.answer = func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	}
	if resp := prompt(t, h, id, demo.Prompt); resp.StopReason != acp.StopReasonCancelled {
		t.Fatalf("stop reason %q, want cancelled", resp.StopReason)
	}
	if n := len(h.client.permissions()); n != 1 {
		t.Errorf("%d permission requests; the turn should stop at the first", n)
	}
}
