package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
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
	want := []string{"list_dir", "read_file", "grep", "edit_file", "run_shell", ""}
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
	msgs := []llmtest.Message{
		{Role: "user", Content: Prompt},
		{Role: "assistant"}, {Role: "tool"}, {Role: "assistant"}, {Role: "tool"},
		{Role: "assistant"}, {Role: "tool"}, {Role: "assistant"},
		{Role: "tool", Content: "denied: the user did not approve this edit_file call."},
	}
	r := ScriptWithPace(0).Reply(&llmtest.Req{Messages: msgs})
	if len(r.ToolCalls) != 0 || !strings.Contains(r.Content, "declined") {
		t.Errorf("reply after a denial = %+v; want a text answer acknowledging it", r)
	}
}
