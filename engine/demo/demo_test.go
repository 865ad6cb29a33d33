package demo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/step"
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

// TestDemoSessionShowsEveryPanel runs the whole demo through the engine
// on the in-process model the app uses: the fix with its checklist, the
// exploration that triggers a compaction, a new cycle, the recall from the
// archive and the delegation, with usage and cache hits reported.
func TestDemoSessionShowsEveryPanel(t *testing.T) {
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
	var infos []rewrite.Info
	cfg := agent.Config{
		Store: st, Approver: tool.ApproveAll{},
		ModelChoice: agent.ModelChoice{ModelName: ModelName, ContextWindow: ContextWindow, Model: NewModel(0)},
		OnEvent: func(e agent.Event) {
			if e.Kind == agent.EventRebuild {
				rebuilds = append(rebuilds, e.Reason)
				infos = append(infos, *e.Rebuild)
			}
		},
	}
	s, err := agent.Create(cfg, "demo", ws, "Demo")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	res, err := s.Run(ctx, Prompt)
	if err != nil || !strings.Contains(res.Answer, "Fixed") {
		t.Fatalf("fix turn: %+v, %v", res, err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go"))
	if !strings.Contains(string(b), "return a + b") {
		t.Error("the demo did not fix calc.go")
	}
	passed := strings.Contains(res.Answer, testWords.done)
	if !passed && !strings.Contains(res.Answer, "`go test ./...` failed") {
		t.Errorf("the fix answer does not report the test run:\n%s", res.Answer)
	}
	items := s.Snapshot().Checklist
	if len(items) != 3 || items[0].Status != todo.Completed || items[1].Status != todo.Completed ||
		(items[2].Status == todo.Completed) != passed {
		t.Errorf("checklist after the fix (tests passed: %v): %+v", passed, items)
	}
	before := len(infos)
	res, err = s.Run(ctx, ExplorePrompt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rebuilds) == 0 {
		t.Fatal("exploring the project did not fill the window into a compaction or a new cycle")
	}
	// The story's last words say what the engine did, and nothing else.
	if want := toldOf(infos[before:]); !strings.Contains(res.Answer, want) {
		t.Errorf("the engine's rewrites were %+v, so the answer should say %q; it says:\n%s", infos[before:], want, res.Answer)
	}
	archives, err := s.Compaction().Archives()
	if err != nil {
		t.Fatal(err)
	}
	if cycled := strings.Contains(res.Answer, saidCycle); cycled != (len(archives) > 0) {
		t.Errorf("the answer says a cycle happened: %v; archived cycles: %d", cycled, len(archives))
	}
	if err := s.Compaction().NewCycle(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = s.Run(ctx, RecallPrompt)
	if err != nil || !strings.Contains(res.Answer, "From the archive") {
		t.Fatalf("recall turn: %+v, %v", res, err)
	}
	if passed != strings.Contains(res.Answer, testWords.done) {
		t.Errorf("the recall answer disagrees with the test run (passed: %v):\n%s", passed, res.Answer)
	}
	res, err = s.Run(ctx, DelegatePrompt)
	if err != nil || !strings.Contains(res.Answer, "Both sub-agents reported") {
		t.Fatalf("delegation turn: %+v, %v", res, err)
	}
	kids, err := s.Subagents().List()
	if err != nil || len(kids) != 2 || kids[0].Status != step.ReasonDone || kids[1].Status != step.ReasonDone {
		t.Fatalf("children %+v, %v", kids, err)
	}
	rows, err := s.Audit().Ledger()
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, r := range rows {
		if r.PromptTokens <= 0 || r.CacheHitTokens+r.CacheMissTokens != r.PromptTokens {
			t.Errorf("request %d: usage %d prompt = %d hit + %d miss", r.Request, r.PromptTokens, r.CacheHitTokens, r.CacheMissTokens)
		}
		hits += r.CacheHitTokens
	}
	if hits == 0 {
		t.Error("no request of the demo hit the simulated prompt cache")
	}
	t.Logf("rebuilds: %v", rebuilds)
}

// On a fresh machine the user's build cache does not exist yet when the
// demo session starts, and the demo's `go test ./...` failed inside the
// sandbox while the scripted answer said the tests passed. On a fresh HOME
// the test step now passes, and the answer says what really happened.
func TestDemoTestsPassOnAFreshHome(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo's tests in the sandbox")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("GOCACHE", "")
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", "")
	st, err := storage.Open(filepath.Join(t.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws := t.TempDir()
	if err := NewWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{Store: st, Approver: tool.ApproveAll{}, ModelChoice: agent.ModelChoice{ModelName: ModelName, ContextWindow: ContextWindow, Model: NewModel(0)}}
	s, err := agent.Create(cfg, "fresh", ws, "Demo")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(context.Background(), Prompt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Answer, testWords.done) {
		var shell string
		for _, m := range s.Snapshot().Messages() {
			if m.Role == "tool" && (strings.Contains(m.Text(), "go test") || strings.Contains(m.Text(), "FAIL")) {
				shell += m.Text() + "\n"
			}
		}
		t.Fatalf("the demo's tests did not pass on a fresh HOME:\n%s\n--- tool results:\n%s", res.Answer, shell)
	}
}

// toldOf is what the exploration story must say after the rewrites infos
// of its turn.
func toldOf(infos []rewrite.Info) string {
	compacted, summarised := false, false
	for _, in := range infos {
		switch in.Kind {
		case rewrite.Cycle:
			return saidCycle
		case rewrite.Compaction, rewrite.Emergency:
			compacted = true
			summarised = summarised || in.Summary != ""
		}
	}
	switch {
	case summarised:
		return saidSummary
	case compacted:
		return saidCleared
	}
	return saidNothing
}

// TestExploringAgainSaysNothingWasRead: a second "Explore" in the same
// conversation does not tell the first one's story again; it says that
// nothing was read this time, and the engine rewrote nothing.
func TestExploringAgainSaysNothingWasRead(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: ExplorePrompt},
		{Role: "assistant", Content: organisation + saidSummary},
		{Role: "user", Content: ExplorePrompt},
	}
	r := Answer(Request{Messages: msgs})
	if !strings.Contains(r.Content, saidAgain) || strings.Contains(r.Content, saidSummary) || len(r.ToolCalls) != 0 {
		t.Fatalf("a second exploration answered %+v", r)
	}
	first := Answer(Request{Messages: msgs[:1]})
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "read_file" {
		t.Fatalf("the first exploration does not start reading: %+v", first)
	}
}
