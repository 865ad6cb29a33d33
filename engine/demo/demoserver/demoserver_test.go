package demoserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	_ "github.com/tally-dev/tally/engine/llm/llmtest/chattemplates"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/storage"
)

func TestMain(m *testing.M) { sandbox.RunTests(m) }

// approveAllButShell approves every call but run_shell's, so the story
// takes its declined-tests path without the cost of a real go test.
type approveAllButShell struct{}

func (approveAllButShell) Approve(_ context.Context, r tool.ApprovalRequest) (tool.Decision, error) {
	if r.Tool == "run_shell" {
		return tool.Deny, nil
	}
	return tool.Approve, nil
}

// TestFixOverHTTP plays the demo's fix story through the engine's real
// client against the strict test server, rendered through a real chat
// template: every request the story makes is one a backend accepts, and
// the answer says the tests were declined, as they were.
func TestFixOverHTTP(t *testing.T) {
	srv := llmtest.New(Script(0))
	defer srv.Close()
	st, err := storage.Open(filepath.Join(t.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws := t.TempDir()
	if err := demo.NewWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{
		Store: st, Approver: approveAllButShell{},
		ModelChoice: agent.ModelChoice{ModelName: demo.ModelName, ContextWindow: demo.ContextWindow, Model: llm.NewOpenAI(llm.Config{BaseURL: srv.URL(), APIKey: "demo"})},
	}
	s, err := agent.Create(cfg, "demo", ws, "Demo")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(context.Background(), demo.Prompt)
	if err != nil || !strings.Contains(res.Answer, "Fixed, not tested") || !strings.Contains(res.Answer, "was not run") {
		t.Fatalf("fix turn: %+v, %v", res, err)
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("server rejected a request: %s", bad[0].Error)
	}
}
