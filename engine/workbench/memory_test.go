package workbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/memory"
)

// Texts the scripted model proposes.
const (
	keptText     = "Run the tests with `go test ./calc/...` from the repository root."
	rejectedText = "Always run gofmt before committing, even for generated files."
	prefText     = "The user wants answers in British English."
)

// memoryScript answers a memory proposal with three entries and a
// malformed one, and every other request with a plain answer.
func memoryScript() llmtest.Script {
	return llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		if !strings.Contains(last, "Propose what is worth remembering") {
			return llmtest.Text("done")
		}
		return llmtest.Text("Here you are:\n```json\n" + `{"entries": [
			{"kind": "build", "text": "` + strings.ReplaceAll(keptText, "`", "\\u0060") + `", "source": 1},
			{"kind": "convention", "text": "` + rejectedText + `", "source": "turn 1"},
			{"kind": "preference", "text": "` + prefText + `", "source": {"turn": 9}},
			{"kind": "todo", "text": "Not a kind of memory.", "source": 1},
			{"kind": "pitfall", "text": "   ", "source": 1}
		]}` + "\n```")
	})
}

// memoryBench opens a workbench on server, with the user's config folder
// (AGENTS.md, memory.md) in a temporary folder.
func memoryBench(t *testing.T, server *llmtest.Server) (*Workbench, string) {
	t.Helper()
	userDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", userDir)
	w := bench(t, nil)
	if err := w.SaveSettings(Settings{BaseURL: server.URL(), Model: "memory-model", APIKey: "sk-test"}); err != nil {
		t.Fatal(err)
	}
	return w, filepath.Join(userDir, "tally")
}

// TestAcceptedMemoryEntersOnlyTheNextSession: the model proposes entries
// over session one's conversation (its call a memory row of the ledger);
// one is accepted, one edited and accepted, one rejected, a malformed one
// dropped with a note. No request of session one carries an accepted
// entry, before or after the acceptance; session two's first request
// does; the rejected entry is in no request and no file.
func TestAcceptedMemoryEntersOnlyTheNextSession(t *testing.T) {
	server := llmtest.New(memoryScript())
	defer server.Close()
	w, userDir := memoryBench(t, server)
	ws := t.TempDir()
	cfg, err := w.Config(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := w.CreateSession(cfg, ws, "")
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	ctx := context.Background()
	if _, err := w.ProposeMemory(ctx, one); err == nil || !strings.Contains(err.Error(), "no turn to propose memory from") {
		t.Errorf("a proposal from a session without turns: %v", err)
	}
	if _, err := one.Run(ctx, "Fix the failing test in calc"); err != nil {
		t.Fatal(err)
	}
	p, err := w.ProposeMemory(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 3 {
		t.Fatalf("proposed %d entries, want 3: %+v (notes %q)", len(p.Entries), p.Entries, p.Notes)
	}
	if len(p.Notes) != 3 || !strings.Contains(strings.Join(p.Notes, "\n"), `"todo" is not a kind of memory`) {
		t.Errorf("notes: %q", p.Notes)
	}
	build, conv, pref := p.Entries[0], p.Entries[1], p.Entries[2]
	if build.Text != keptText || build.Source != (memory.Source{Session: one.Snapshot().Meta.ID, Turn: 1}) || conv.Source.Turn != 1 {
		t.Errorf("entries %+v, %+v", build, conv)
	}
	if pref.Source.Turn != 0 {
		t.Errorf("a turn the session does not have was kept: %+v", pref)
	}
	pending, err := w.PendingMemory()
	if err != nil || len(pending) != 3 {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	rows, _ := w.Ledger(one.Snapshot().Meta.ID)
	if len(rows) != 2 || rows[1].Kind != ledger.KindMemory {
		t.Errorf("the proposal is not a memory row of the ledger: %+v", rows)
	}
	proposal := server.Requests()[len(server.Requests())-1]
	if proposal.Hit == 0 {
		t.Errorf("the proposal did not reuse the session's cached prefix (hit %d of %d)", proposal.Hit, proposal.Prompt)
	}

	if _, err := w.AcceptMemory(build.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.EditMemory(pref.ID, prefText+" Spell it colour.", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcceptMemory(pref.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.RejectMemory(conv.ID); err != nil {
		t.Fatal(err)
	}
	if pending, _ := w.PendingMemory(); len(pending) != 0 {
		t.Errorf("still pending: %+v", pending)
	}
	if _, err := w.AcceptMemory(conv.ID); err == nil {
		t.Error("a rejected entry could be accepted")
	}
	// Session one goes on: its prefix is the one it started with.
	if _, err := one.Run(ctx, "Thanks, carry on"); err != nil {
		t.Fatal(err)
	}
	sessionOne := len(server.Requests())
	if sessionOne != 3 {
		t.Fatalf("session one made %d requests, want 3 (a turn, the proposal, a turn)", sessionOne)
	}

	two, err := w.CreateSession(cfg, ws, "")
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	if _, err := two.Run(ctx, "Add a Sub function"); err != nil {
		t.Fatal(err)
	}
	for i, r := range server.Requests() {
		body := string(r.Body)
		if strings.Contains(body, "Always run gofmt") {
			t.Errorf("request %d carries the rejected entry", i)
		}
		if i < sessionOne && (strings.Contains(body, "go test ./calc/...") || strings.Contains(body, "British English")) {
			t.Errorf("request %d of the proposing session carries an accepted entry", i)
		}
	}
	first := server.Requests()[sessionOne]
	if sys := first.Messages[0].Content; !strings.Contains(sys, "- [build] "+keptText) || !strings.Contains(sys, "- [preference] "+prefText+" Spell it colour.") {
		t.Errorf("session two's first request lacks the accepted entries; its system prompt ends:\n%s", sys[max(0, len(sys)-600):])
	}
	project, _ := os.ReadFile(filepath.Join(ws, ".tally", "memory.md"))
	user, _ := os.ReadFile(filepath.Join(userDir, "memory.md"))
	if !strings.Contains(string(project), keptText) || strings.Contains(string(project), prefText) || !strings.Contains(string(user), prefText) {
		t.Errorf("the files hold:\n%s\n---\n%s", project, user)
	}
	if strings.Contains(string(project)+string(user), "Always run gofmt") {
		t.Error("the rejected entry was written to a memory file")
	}
	got := w.AcceptedMemory(ws)
	if len(got) != 2 || got[0].Source.Turn != 1 || MemoryCost(got[0]) < 10 {
		t.Errorf("accepted %+v", got)
	}
}

// TestPendingMemorySurvivesReopening: what waits for review is in the
// store, so it is there after the data folder is opened again; stored
// proposals that cannot be read are an error until rejected all at once.
func TestPendingMemorySurvivesReopening(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	err = w.updateMemory(false, func(b *memoryBook) error {
		b.Next++
		b.Pending = append(b.Pending, memory.Entry{ID: b.Next, Kind: memory.Pitfall, Text: "Mind the cache.", Source: memory.Source{Session: "s", Turn: 2}, Workspace: "/ws"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, _, err = Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pending, err := w.PendingMemory()
	if err != nil || len(pending) != 1 || pending[0].Text != "Mind the cache." || pending[0].Source.Turn != 2 {
		t.Fatalf("after reopening: %+v, %v", pending, err)
	}
	if err := w.store.PutSetting(memoryKey, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.PendingMemory(); err == nil || !strings.Contains(err.Error(), "reject them all") {
		t.Errorf("unreadable proposals: %v", err)
	}
	if err := w.RejectMemory(1); err == nil {
		t.Error("one entry of unreadable proposals was rejected")
	}
	if err := w.RejectMemory(0); err != nil {
		t.Fatal(err)
	}
	if pending, err := w.PendingMemory(); err != nil || len(pending) != 0 {
		t.Errorf("after rejecting all: %+v, %v", pending, err)
	}
}

// Accepting a project entry writes .tally/memory.md, which the hooks' and
// MCP files' fingerprints cover: trust that held right before the write
// is renewed, and trust that did not hold stays withdrawn.
func TestAcceptingMemoryKeepsTheTrustThatHeld(t *testing.T) {
	w, _, err := Open(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	trusted, untrusted := t.TempDir(), t.TempDir()
	for _, ws := range []string{trusted, untrusted} {
		os.MkdirAll(filepath.Join(ws, ".tally"), 0o755)
		os.WriteFile(hooks.WorkspacePath(ws), []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}`), 0o644)
		os.WriteFile(mcp.WorkspacePath(ws), []byte(`{"mcpServers": {"docs": {"command": "docs-server"}}}`), 0o644)
	}
	hf, err := w.HooksWorkspaceFile(trusted)
	if err != nil || w.TrustHooks(trusted, hf.Hash) != nil {
		t.Fatalf("hooks: %+v, %v", hf, err)
	}
	mf, err := w.MCPWorkspaceFile(trusted)
	if err != nil || w.TrustMCP(trusted, mf.Hash) != nil {
		t.Fatalf("mcp: %+v, %v", mf, err)
	}
	for i, ws := range []string{trusted, untrusted} {
		err := w.updateMemory(false, func(b *memoryBook) error {
			b.Next++
			b.Pending = append(b.Pending, memory.Entry{ID: b.Next, Kind: memory.Pitfall, Text: fmt.Sprintf("Pitfall %d.", i), Source: memory.Source{Session: "s", Turn: 1}, Workspace: ws})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AcceptMemory(i + 1); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(memory.ProjectFile(trusted)); !strings.Contains(string(data), "Pitfall 0.") {
		t.Fatalf("the entry was not written: %q", data)
	}
	if hf, _ := w.HooksWorkspaceFile(trusted); hf.NeedsTrust {
		t.Error("accepting an entry withdrew the trust in the hooks file")
	}
	if mf, _ := w.MCPWorkspaceFile(trusted); mf.NeedsTrust {
		t.Error("accepting an entry withdrew the trust in the MCP file")
	}
	if hf, _ := w.HooksWorkspaceFile(untrusted); !hf.NeedsTrust {
		t.Error("accepting an entry trusted a hooks file nobody trusted")
	}
	if mf, _ := w.MCPWorkspaceFile(untrusted); !mf.NeedsTrust {
		t.Error("accepting an entry trusted an MCP file nobody trusted")
	}
}

// Memory is due from a session once it had MemoryDueTurns turns since the
// last proposal from it (or since it began), and not right after one.
func TestMemoryIsDueAfterEnoughNewTurns(t *testing.T) {
	server := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("Done.") }))
	defer server.Close()
	w, _ := memoryBench(t, server)
	cfg, err := w.Config(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := w.CreateSession(cfg, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx := context.Background()
	turns := func(n int) {
		for i := range n {
			if _, err := sess.Run(ctx, fmt.Sprintf("step %d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	turns(MemoryDueTurns - 1)
	if w.MemoryDue(sess) {
		t.Errorf("memory is due after %d turns", MemoryDueTurns-1)
	}
	turns(1)
	if !w.MemoryDue(sess) {
		t.Fatalf("memory is not due after %d turns", MemoryDueTurns)
	}
	if _, err := w.ProposeMemory(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if w.MemoryDue(sess) {
		t.Error("memory is due right after a proposal")
	}
	turns(MemoryDueTurns)
	if !w.MemoryDue(sess) {
		t.Errorf("memory is not due %d turns after the last proposal", MemoryDueTurns)
	}
	// Turned off in Settings, it is never due.
	s := w.Settings()
	s.NoMemoryOnLeave = true
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	if w.MemoryDue(sess) {
		t.Error("memory is due with the proposal on leaving turned off")
	}
}
