package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/tool"
)

// A session that uses a skill, a command file, a custom sub-agent and
// hooks keeps the provider's cache: every request of the parent begins
// with request 1's messages and tools byte for byte (request 1's last
// message without the status block the tail placement puts there and
// moves), and the cache hits are at least 99.9 % of the ideal where the
// chat template renders history the same way every time (DeepSeek-V4's).
// Two losses are by design and held to lower floors: the tail placement
// gives up the status block's ~130 tokens a request (see the README's
// placement table), and the Qwen3.5 template drops the empty <think>
// of the last turn's replies once a new user turn starts, which no
// client can avoid.
func TestSkillCommandAgentAndHooksKeepThePrefix(t *testing.T) {
	for _, c := range []struct {
		template string
		mode     status.Placement
		floor    float64
	}{
		{llmtest.TemplateDeepSeekV4, status.OnChange, 0.999},
		{llmtest.TemplateDeepSeekV4, status.Append, 0.999},
		{llmtest.TemplateDeepSeekV4, status.Tail, 0.98},
		{llmtest.TemplateQwen35, status.OnChange, 0.99},
		{llmtest.TemplateQwen35, status.Tail, 0.98},
	} {
		t.Run(c.template+"/"+string(c.mode), func(t *testing.T) { customCache(t, c.template, c.mode, c.floor) })
	}
}

func customCache(t *testing.T, template string, mode status.Placement, floor float64) {
	user := t.TempDir()
	writeSkill(t, filepath.Join(user, "skills"), "pdf", "Fill in PDF forms.", "Use pdftk.")
	for path, text := range map[string]string{
		"commands/review.md": "---\ndescription: Review a file.\n---\nReview $ARGUMENTS for bugs.",
		"agents/reviewer.md": reviewerAgent,
	} {
		p := filepath.Join(user, filepath.FromSlash(path))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	isReviewer := func(msgs []llmtest.Message) bool {
		return len(msgs) > 0 && strings.HasPrefix(msgs[0].Content, "# Reviewer")
	}
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isReviewer(r.Messages) {
			if toolResults(r.Messages) == 0 {
				return llmtest.Call("read_file", `{"path":"a.txt"}`)
			}
			return llmtest.Text("Report: a.txt is fine.")
		}
		human := r.LastHuman()
		switch n := r.ToolResultsSinceHuman(); {
		case strings.Contains(human, "Review a.txt for bugs."):
			if n == 0 {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("review a", "review a.txt", "reviewer")}}
			}
			return llmtest.Text("reviewed")
		case n == 0:
			return llmtest.Call(skill.ToolName, `{"name":"pdf"}`)
		case n == 1:
			return llmtest.Call("read_file", `{"path":"a.txt"}`)
		}
		return llmtest.Text("done")
	})
	h := newHarness(t, script, tool.ApproveAll{}, llmtest.WithTemplate(template))
	h.cfg.UserConfigDir = user
	h.cfg.StatusMode = mode
	h.useHooks(`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'remember: tests first'"}]}],
		"PreToolUse": [{"matcher": "read_file", "hooks": [{"type": "command", "command": "true"}]}]}}`)
	s := h.session("custom-cache")
	if _, err := s.Run(context.Background(), "fill the form"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "/review a.txt"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	var parent []llmtest.Recorded
	for _, r := range h.srv.Requests() {
		if !isReviewer(r.Messages) {
			parent = append(parent, r)
		}
	}
	if len(parent) < 5 {
		t.Fatalf("only %d parent requests", len(parent))
	}
	if !strings.Contains(parent[0].Messages[0].Content, "- pdf: Fill in PDF forms.") || !strings.Contains(parent[0].Messages[0].Content, "- reviewer:") {
		t.Fatal("the system prompt lacks the skill or the agent")
	}
	if !strings.Contains(parent[len(parent)-2].Messages[len(parent[len(parent)-2].Messages)-1].Content, "remember: tests first") &&
		!strings.Contains(string(parent[len(parent)-1].Body), "remember: tests first") {
		t.Error("the hook's context never reached a request")
	}
	first := parent[0].Body
	if mode == status.Tail {
		first = withoutLastMessage(t, first)
	}
	for i := 1; i < len(parent); i++ {
		requestPrefix(t, first, parent[i].Body)
	}
	st := h.srv.Stats()
	t.Logf("%d requests, %d prompt tokens, %d hit, ideal %d (%.2f%% of ideal)", st.Accepted, st.Prompt, st.Hit, st.Ideal, 100*float64(st.Hit)/float64(st.Ideal))
	if float64(st.Hit) < floor*float64(st.Ideal) {
		t.Errorf("cache hits %d of an ideal %d", st.Hit, st.Ideal)
	}
}

// withoutLastMessage is a request body without its last message.
func withoutLastMessage(t *testing.T, body []byte) []byte {
	t.Helper()
	var req map[string]json.RawMessage
	var msgs []json.RawMessage
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(req["messages"], &msgs) != nil || len(msgs) == 0 {
		t.Fatal("unreadable request body")
	}
	req["messages"], _ = json.Marshal(msgs[:len(msgs)-1])
	out, _ := json.Marshal(req)
	return out
}
