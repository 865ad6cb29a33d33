package acp

import (
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestForkSession: initialize offers session/fork; forking turn 1 of a
// session of two turns opens a new session on the connection whose first
// request carries turn 1 and not turn 2, served from the cache the
// parent warmed; a cwd other than the parent's folder is refused.
func TestForkSession(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("first answer"), llmtest.Text("second answer"), llmtest.Text("the fork's answer")))
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "first question")
	prompt(t, h, id, "second question")
	if _, err := h.conn.UnstableForkSession(ctx(t), acp.UnstableForkSessionRequest{SessionId: id, Cwd: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "same folder") {
		t.Errorf("a fork into another folder: %v", err)
	}
	before, _ := h.conn.ListSessions(ctx(t), acp.ListSessionsRequest{})
	if _, err := h.conn.UnstableForkSession(ctx(t), acp.UnstableForkSessionRequest{SessionId: id, Cwd: f.ws, AdditionalDirectories: []string{"/no/such/folder"}}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a fork with a missing additional directory: %v", err)
	}
	if after, _ := h.conn.ListSessions(ctx(t), acp.ListSessionsRequest{}); len(after.Sessions) != len(before.Sessions) {
		t.Errorf("a refused fork left a session: %d sessions, were %d", len(after.Sessions), len(before.Sessions))
	}
	extra := t.TempDir()
	resp, err := h.conn.UnstableForkSession(ctx(t), acp.UnstableForkSessionRequest{SessionId: id, Cwd: f.ws, AdditionalDirectories: []string{extra},
		Meta: map[string]any{"tally": map[string]any{"turn": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := h.conn.ListSessions(ctx(t), acp.ListSessionsRequest{}); !slices.ContainsFunc(list.Sessions, func(s acp.SessionInfo) bool {
		return s.SessionId == resp.SessionId && len(s.AdditionalDirectories) == 1
	}) {
		t.Errorf("the fork does not have its additional directory: %+v", list.Sessions)
	}
	meta, _ := resp.Meta["tally"].(map[string]any)
	if resp.SessionId == "" || resp.SessionId == id || meta["forkOf"] != string(id) || resp.Modes == nil || len(resp.ConfigOptions) == 0 {
		t.Fatalf("the fork's answer: %+v", resp)
	}
	prompt(t, h, resp.SessionId, "the fork's question")
	reqs := f.model.Requests()
	last := reqs[len(reqs)-1]
	body := string(last.Body)
	if !strings.Contains(body, "first answer") || strings.Contains(body, "second question") || !strings.Contains(body, "the fork's question") {
		t.Errorf("the fork's request does not hold turn 1 alone:\n%s", body)
	}
	if last.Hit == 0 || last.Hit < reqs[1].Hit {
		t.Errorf("the fork's request hit %d tokens of the cache; the parent's second turn hit %d", last.Hit, reqs[1].Hit)
	}
}
