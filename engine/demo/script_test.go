package demo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/memory"
)

// play drives the script through the fix story: each reply's calls get
// IDs and are answered by result(name), until the script answers in text.
func play(t *testing.T, result func(name string) string) (msgs []Message, tools []string, answer string) {
	t.Helper()
	msgs = []Message{{Role: "user", Content: "<turn_meta>\n</turn_meta>\n" + Prompt}}
	for step := 0; step < 20; step++ {
		r := Answer(Request{Messages: msgs})
		if len(r.ToolCalls) == 0 {
			return msgs, tools, r.Content
		}
		m := Message{Role: "assistant", Content: r.Content}
		for i, c := range r.ToolCalls {
			c.ID = fmt.Sprintf("call_%d_%d", step, i)
			m.ToolCalls = append(m.ToolCalls, c)
			tools = append(tools, c.Name)
		}
		msgs = append(msgs, m)
		for _, c := range m.ToolCalls {
			msgs = append(msgs, Message{Role: "tool", ToolCallID: c.ID, Content: result(c.Name)})
		}
	}
	t.Fatal("the script never answered in text")
	return
}

func results(shell string) func(string) string {
	return func(name string) string {
		switch name {
		case "run_shell":
			return shell
		case "edit_file":
			return "edited calc/calc.go: replaced 1 occurrence; lines 6-6"
		}
		return "ok"
	}
}

const (
	passOutput = "ok  \texample.com/calc/calc\t0.002s\nexit status 0"
	failOutput = "--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: Add(2, 3) = -1; want 5\nFAIL\nFAIL\texample.com/calc/calc\t0.002s\nFAIL\nexit status 1"
	failLine   = "calc_test.go:7: Add(2, 3) = -1; want 5"
)

func TestScriptFollowsTheTurn(t *testing.T) {
	_, tools, answer := play(t, results(passOutput))
	want := []string{"checklist_write", "list_dir", "read_file", "grep", "checklist_write", "edit_file", "checklist_write", "run_shell", "todo_update"}
	if strings.Join(tools, " ") != strings.Join(want, " ") {
		t.Errorf("calls %v; want %v", tools, want)
	}
	if !strings.Contains(answer, "## Fixed\n") || !strings.Contains(answer, "`go test ./...` passed.") {
		t.Errorf("answer after passing tests:\n%s", answer)
	}
}

// TestScriptTellsWhatTheTestsSaid checks that a failing test run is
// reported as it happened in the answer, in the hand-off brief, in a
// compaction summary and in the recall from the archive of the next
// cycle, where only the brief remembers it.
func TestScriptTellsWhatTheTestsSaid(t *testing.T) {
	msgs, tools, answer := play(t, results(failOutput))
	if tools[len(tools)-1] != "run_shell" {
		t.Errorf("after failing tests the script called %v; want no checklist tick", tools[len(tools)-1])
	}
	if strings.Contains(answer, "passed") || !strings.Contains(answer, "failed") || !strings.Contains(answer, failLine) {
		t.Errorf("answer after failing tests:\n%s", answer)
	}
	msgs = append(msgs, Message{Role: "assistant", Content: answer})
	brief := Answer(Request{Messages: append(msgs, Message{Role: "user", Content: cycle.BriefInstruction})}).Content
	if !strings.Contains(brief, failLine) || strings.Contains(brief, "passed") || !strings.Contains(brief, testWords.failed) {
		t.Errorf("brief after failing tests:\n%s", brief)
	}
	summary := Answer(Request{Messages: []Message{
		{Role: "system", Content: "You summarise transcripts"},
		{Role: "user", Content: "Transcript to summarise:\n\nAssistant: " + answer + "\n\n---\n\nWrite a summary of the conversation so far."},
	}}).Content
	if !strings.Contains(summary, failLine) {
		t.Errorf("summary of a transcript whose tests failed:\n%s", summary)
	}
	recall := []Message{
		{Role: "user", Content: cycle.SeedMarker + "\n" + brief},
		{Role: "user", Content: RecallPrompt},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "recall_archive", Arguments: `{"query":"return a - b"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "cycle 1: `Add` returns `a - b`."},
	}
	said := Answer(Request{Messages: recall}).Content
	if !strings.Contains(said, "From the archive") || !strings.Contains(said, failLine) || strings.Contains(said, "passed") {
		t.Errorf("recall after failing tests:\n%s", said)
	}
}

func TestScriptAfterDeclinedTests(t *testing.T) {
	_, _, answer := play(t, results("denied: the user did not approve this run_shell call."))
	if strings.Contains(answer, "passed") || !strings.Contains(answer, testWords.declined) {
		t.Errorf("answer after a declined test run:\n%s", answer)
	}
}

func TestScriptAfterDeniedEdit(t *testing.T) {
	r := results(passOutput)
	_, tools, answer := play(t, func(name string) string {
		if name == "edit_file" {
			return "denied: the user did not approve this edit_file call."
		}
		return r(name)
	})
	if tools[len(tools)-1] != "edit_file" || !strings.Contains(answer, "declined") {
		t.Errorf("after a denied edit: calls %v, answer %q; want a text answer acknowledging it", tools, answer)
	}
}

func TestFirstFailing(t *testing.T) {
	for out, want := range map[string]string{
		failOutput: failLine,
		"# example.com/calc/calc\ncalc/calc.go:6:9: undefined: c\nFAIL\texample.com/calc/calc [build failed]\nexit status 1": "calc/calc.go:6:9: undefined: c",
		"bash: line 1: go: command not found\nexit status 127":                                                               "bash: line 1: go: command not found",
		"exit status 2": "no output",
	} {
		if got := firstFailing(out); got != want {
			t.Errorf("firstFailing(%q) = %q; want %q", out, got, want)
		}
	}
}

// TestScriptProposesMemory: after the fix story whose tests passed, a
// memory proposal gets the build command and the pitfall, from the fix's
// turn, in the shape memory.Parse takes; a session without a story gets
// none.
func TestScriptProposesMemory(t *testing.T) {
	msgs, _, _ := play(t, results(passOutput))
	turns := []memory.Turn{{N: 1, Text: Prompt}}
	ask := func(msgs []Message) memory.Proposal {
		req := memory.Request(llm.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}, turns)
		msgs = append(msgs, Message{Role: "user", Content: req.Messages[len(req.Messages)-1].Content})
		return memory.Parse(Answer(Request{Messages: msgs}).Content, turns, "s1", "/ws")
	}
	p := ask(msgs)
	if len(p.Entries) != 2 || len(p.Notes) != 0 || p.Entries[0].Kind != memory.Build || !strings.Contains(p.Entries[0].Text, "go test ./...") ||
		p.Entries[1].Kind != memory.Pitfall || p.Entries[0].Source.Turn != 1 {
		t.Errorf("after the fix story the proposal is %+v", p)
	}
	turns = []memory.Turn{{N: 1, Text: "hello"}}
	if p := ask([]Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: hello}}); len(p.Entries) != 0 || len(p.Notes) != 0 {
		t.Errorf("a session without a story proposed %+v", p)
	}
}
