package agent

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/trust"
)

func writeSkill(t *testing.T, dir, name, desc, body string) {
	t.Helper()
	p := filepath.Join(dir, name, skill.FileName)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A session lists the skills it starts with in its system prompt (the
// workspace's only once trusted), loads one on demand through the skill
// tool, and names a skill added later in the status block, with every
// request extending the one before it.
func TestSkillsLoadOnDemandAndNeverMoveThePrefix(t *testing.T) {
	user := t.TempDir()
	writeSkill(t, filepath.Join(user, "skills"), "pdf", "Fill in PDF forms.", "Use pdftk to fill forms.\nSee reference.md.\n")
	if err := os.WriteFile(filepath.Join(user, "skills", "pdf", "reference.md"), []byte("pdftk in.pdf fill_form data.fdf output out.pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, llmtest.Sequence(
		llmtest.Call(skill.ToolName, `{"name":"pdf"}`),
		llmtest.Call(skill.ToolName, `{"name":"pdf","file":"reference.md"}`),
		llmtest.Text("done"),
		llmtest.Call(skill.ToolName, `{"name":"deploy"}`),
		llmtest.Text("deployed"),
	), tool.ApproveAll{})
	h.cfg.UserConfigDir = user
	writeSkill(t, filepath.Join(h.ws, ".claude", "skills"), "deploy", "Deploy the site.", "Run make deploy.")

	s := h.session("skills")
	if _, err := s.Run(context.Background(), "fill the form"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	sys := reqs[0].Messages[0].Content
	if !strings.Contains(sys, "# Skills") || !strings.Contains(sys, "- pdf: Fill in PDF forms.") || strings.Contains(sys, "deploy") {
		t.Fatalf("system prompt's skills:\n%s", sys)
	}
	if res := h.toolResult(reqs[1]); !strings.Contains(res, "Use pdftk to fill forms.") || !strings.Contains(res, "- reference.md") {
		t.Fatalf("the skill as loaded:\n%s", res)
	}
	if res := h.toolResult(reqs[2]); !strings.Contains(res, "fill_form data.fdf") {
		t.Fatalf("the skill's file:\n%s", res)
	}

	// The workspace's skill, trusted now, is named as new; the prompt
	// stays as it was.
	cat := skill.Discover(user, h.ws, "")
	if err := trust.Put(h.st, trust.Skills, h.ws, cat.WorkspaceHash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "now deploy"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs = h.srv.Requests()
	tail := reqs[3].Messages[len(reqs[3].Messages)-1].Content
	if !strings.Contains(tail, "new skill deploy: Deploy the site.") {
		t.Errorf("the new skill is not announced in the tail of request 4:\n%s", tail)
	}
	if res := h.toolResult(reqs[4]); !strings.Contains(res, "Run make deploy.") {
		t.Fatalf("the new skill as loaded:\n%s", res)
	}
	for i := 1; i < len(reqs); i++ {
		if reqs[i].Messages[0].Content != sys {
			t.Fatalf("request %d changed the system prompt", i+1)
		}
		prev, cur := reqs[i-1].Messages, reqs[i].Messages
		if len(cur) < len(prev) || !reflect.DeepEqual(prev[:len(prev)-1], cur[:len(prev)-1]) {
			t.Fatalf("request %d does not extend request %d", i+1, i)
		}
	}

	// A session created now has both skills in its prompt.
	s2 := h.session("skills-2")
	if got := strings.Join(s2.st.Skills, ","); got != "deploy,pdf" {
		t.Fatalf("a new session's skills: %s", got)
	}
}

// A session with no skills has no skill tool.
func TestNoSkillNoTool(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("hi")), nil)
	h.cfg.UserConfigDir = t.TempDir()
	s := h.session("plain")
	if _, ok := s.tools.Lookup(skill.ToolName); ok || s.skills != nil {
		t.Fatal("a session without skills offers the skill tool")
	}
}

// toolResult is the content of the last tool result in request r.
func (h *harness) toolResult(r llmtest.Recorded) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "tool" {
			return r.Messages[i].Content
		}
	}
	h.t.Fatal("the request has no tool result")
	return ""
}
