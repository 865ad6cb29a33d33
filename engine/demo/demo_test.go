package demo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/storage"
)

func TestNewWorkspaceHasTheBug(t *testing.T) {
	dir := t.TempDir()
	if err := NewWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "calc", "calc.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "return a - b") {
		t.Errorf("calc.go does not contain the bug:\n%s", b)
	}
}

func TestScriptFollowsTheTurn(t *testing.T) {
	s := ScriptWithPace(0)
	user := llmtest.Message{Role: "user", Content: "<turn_meta>\n</turn_meta>\n" + Prompt}
	msgs := []llmtest.Message{user}
	want := []string{"checklist_write", "list_dir", "read_file", "grep", "checklist_write", "edit_file", "checklist_write", "run_shell", "todo_update", ""}
	for i, name := range want {
		r := s.Reply(&llmtest.Req{Messages: msgs})
		got := ""
		if len(r.ToolCalls) > 0 {
			got = r.ToolCalls[0].Name
		}
		if got != name {
			t.Fatalf("step %d: tool %q; want %q", i, got, name)
		}
		msgs = append(msgs, llmtest.Message{Role: "assistant", Content: r.Content})
		if name != "" {
			msgs = append(msgs, llmtest.Message{Role: "tool", Content: "ok"})
		}
	}
}

func TestScriptAfterDeniedEdit(t *testing.T) {
	msgs := []llmtest.Message{{Role: "user", Content: Prompt}}
	for i := 0; i < 5; i++ {
		msgs = append(msgs, llmtest.Message{Role: "assistant"}, llmtest.Message{Role: "tool"})
	}
	msgs = append(msgs, llmtest.Message{Role: "assistant"},
		llmtest.Message{Role: "tool", Content: "denied: the user did not approve this edit_file call."})
	r := ScriptWithPace(0).Reply(&llmtest.Req{Messages: msgs})
	if len(r.ToolCalls) != 0 || !strings.Contains(r.Content, "declined") {
		t.Errorf("reply after a denial = %+v; want a text answer acknowledging it", r)
	}
}

// TestDemoSessionShowsEveryPanel runs the whole demo through the engine
// over real HTTP: the fix with its checklist, the exploration that triggers
// a compaction, a new cycle, and the recall from the archive.
func TestDemoSessionShowsEveryPanel(t *testing.T) {
	srv := llmtest.New(ScriptWithPace(0))
	defer srv.Close()
	st, err := storage.Open(filepath.Join(t.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws := t.TempDir()
	if err := NewWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	var rebuilds []string
	cfg := agent.Config{
		Store: st, ModelName: ModelName, ContextWindow: ContextWindow, Approver: tool.ApproveAll{},
		Model: llm.NewOpenAI(llm.Config{BaseURL: srv.URL(), APIKey: "demo"}),
		OnEvent: func(e agent.Event) {
			if e.Kind == agent.EventRebuild {
				rebuilds = append(rebuilds, e.Reason)
			}
		},
	}
	s, err := agent.Create(cfg, "demo", ws, "Demo")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := s.Run(ctx, Prompt)
	if err != nil || !strings.Contains(res.Answer, "Fixed") {
		t.Fatalf("fix turn: %+v, %v", res, err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go"))
	if !strings.Contains(string(b), "return a + b") {
		t.Error("the demo did not fix calc.go")
	}
	items := s.Checklist()
	if len(items) != 3 || items[0].Status != todo.Completed || items[1].Status != todo.Completed || items[2].Status != todo.Completed {
		t.Errorf("checklist after the fix: %+v", items)
	}
	if _, err := s.Run(ctx, ExplorePrompt); err != nil {
		t.Fatal(err)
	}
	if len(rebuilds) == 0 {
		t.Fatal("exploring the project did not fill the window into a compaction or a new cycle")
	}
	if err := s.NewCycle(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = s.Run(ctx, RecallPrompt)
	if err != nil || !strings.Contains(res.Answer, "From the archive") {
		t.Fatalf("recall turn: %+v, %v", res, err)
	}
	res, err = s.Run(ctx, DelegatePrompt)
	if err != nil || !strings.Contains(res.Answer, "Both sub-agents reported") {
		t.Fatalf("delegation turn: %+v, %v", res, err)
	}
	kids, err := s.Children()
	if err != nil || len(kids) != 2 || kids[0].Status != agent.ReasonDone || kids[1].Status != agent.ReasonDone {
		t.Fatalf("children %+v, %v", kids, err)
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("server rejected a request: %s", bad[0].Error)
	}
	t.Logf("rebuilds: %v", rebuilds)
}
