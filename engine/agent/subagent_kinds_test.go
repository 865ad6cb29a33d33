package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
)

const reviewerAgent = `---
name: reviewer
description: Reviews a change for bugs and reports them.
tools: Read, Grep
model: review-model
max-steps: 3
---
# Reviewer
You review code. Report bugs with file and line.
`

// A custom sub-agent from the user's agents folder is listed in the
// system prompt and runs with its own prompt, tools, model and budget; a
// file that cannot be used is skipped with a note.
func TestCustomSubagentRunsWithItsOwnPromptToolsAndModel(t *testing.T) {
	user := t.TempDir()
	if err := os.MkdirAll(filepath.Join(user, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(user, "agents", "reviewer.md"), []byte(reviewerAgent), 0o644)
	os.WriteFile(filepath.Join(user, "agents", "broken.md"), []byte("---\ntools: Teleport\ndescription: x\n---\nbody"), 0o644)
	isReviewer := func(msgs []llmtest.Message) bool {
		return len(msgs) > 0 && strings.HasPrefix(msgs[0].Content, "# Reviewer")
	}
	var childModels []string
	var childTools [][]string
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isReviewer(r.Messages) {
			if toolResults(r.Messages) == 0 {
				return llmtest.Call("read_file", `{"path":"a.txt"}`)
			}
			return llmtest.Text("Report: no bugs in a.txt.")
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("review a", "review a.txt", "reviewer")}}
		}
		return llmtest.Text("reviewed")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	h.cfg.UserConfigDir = user
	s := h.session("custom")
	if _, err := s.Run(context.Background(), "review it"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	for _, r := range h.srv.Requests() {
		if isReviewer(r.Messages) {
			childModels = append(childModels, r.Model)
			childTools = append(childTools, r.Tools)
		}
	}
	sys := h.srv.Requests()[0].Messages[0].Content
	if !strings.Contains(sys, "# Custom sub-agents") || !strings.Contains(sys, "- reviewer: Reviews a change for bugs and reports them.") || strings.Contains(sys, "broken") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	if len(childModels) != 2 || childModels[0] != "review-model" {
		t.Fatalf("the reviewer's requests used models %v", childModels)
	}
	if slices.Contains(childTools[0], "run_shell") || !slices.Contains(childTools[0], "grep") || !slices.Contains(childTools[0], "read_file") {
		t.Fatalf("the reviewer's tools: %v", childTools[0])
	}
	infos, err := s.Subagents().List()
	if err != nil || len(infos) != 1 || infos[0].Kind != "reviewer" || infos[0].MaxSteps != 3 {
		t.Fatalf("children %+v, %v", infos, err)
	}
	last := h.srv.Requests()[len(h.srv.Requests())-1]
	if res := h.toolResult(last); !strings.Contains(res, "no bugs in a.txt") {
		t.Fatalf("the parent got %q", res)
	}
	if _, notes := subagent.Discover(user, ""); len(notes) != 1 || !strings.Contains(notes[0], "Teleport") {
		t.Fatalf("notes %q", notes)
	}
}

// An unknown kind is refused with the kinds there are.
func TestUnknownSubagentKindIsRefused(t *testing.T) {
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("x", "do x", "wizard")}}
		}
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	h.cfg.UserConfigDir = t.TempDir()
	s := h.session("unknown-kind")
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if res := h.toolResult(h.srv.Requests()[1]); !strings.Contains(res, `kind "wizard" is not explore, general or a custom sub-agent`) {
		t.Fatalf("result %q", res)
	}
}

// TestAWorkspaceAgentLinkedOutsideIsNotRead is the regression test for
// .claude/agents/x.md linked to a file outside the workspace, which became
// a sub-agent's system prompt: workspace definitions are read without
// following links out of the workspace (a link inside it still works).
func TestAWorkspaceAgentLinkedOutsideIsNotRead(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	def := "---\nname: %s\ndescription: Reviews code.\n---\nYou review code.\n"
	os.WriteFile(filepath.Join(outside, "x.md"), []byte(fmt.Sprintf(def, "leaked")), 0o644)
	os.MkdirAll(filepath.Join(ws, ".claude", "agents"), 0o755)
	os.MkdirAll(filepath.Join(ws, "docs"), 0o755)
	os.WriteFile(filepath.Join(ws, "docs", "y.md"), []byte(fmt.Sprintf(def, "inside")), 0o644)
	if err := os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(ws, ".claude", "agents", "x.md")); err != nil {
		t.Skip(err)
	}
	os.Symlink(filepath.Join("..", "..", "docs", "y.md"), filepath.Join(ws, ".claude", "agents", "y.md"))
	kinds, _ := subagent.Discover("", ws)
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name)
	}
	if slices.Contains(names, "leaked") || !slices.Contains(names, "inside") {
		t.Errorf("kinds = %v, want the link inside read and the one outside refused", names)
	}
}
