package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
)

func TestPostToolUseHookTellsTheModelAndMayEndTheTurn(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Call("run_shell", `{"command": "echo hi"}`), llmtest.Text("ok"),
		llmtest.Call("read_file", `{"path": "a.txt"}`), llmtest.Text("never")), tool.ApproveAll{})
	file := `{"hooks": {"PostToolUse": [
	  {"matcher": "Bash", "hooks": [{"type": "command", "command": "` + h.hookScript("post.sh", `grep -q '"stdout":"hi' && { echo "the output says hi" >&2; exit 2; }; exit 1`) + `"}]},
	  {"matcher": "Read", "hooks": [{"type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"enough reading\"}'"}]}
	]}}`
	h.useHooks(file)
	s := h.session("post")
	if _, err := s.Run(context.Background(), "say hi"); err != nil {
		t.Fatal(err)
	}
	if got := hookToolResult(h, 1); !strings.Contains(got, "PostToolUse hook: the output says hi") || !strings.Contains(got, "hi\n") {
		t.Errorf("the model read %q", got)
	}
	res, err := s.Run(context.Background(), "read a.txt")
	if err != nil || res.Reason != ReasonHookStop {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if n := len(h.srv.Requests()); n != 3 {
		t.Errorf("%d requests; the turn went on after the hook ended it", n)
	}
	evs := h.rec.kinds(EventHook)
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].Err, "ended the turn: enough reading") {
		t.Errorf("hook events = %+v", evs)
	}
	// The next turn runs normally again.
	if res, err := s.Run(context.Background(), "go on"); err != nil || res.Reason != step.ReasonDone {
		t.Errorf("the next turn = %+v, %v", res, err)
	}
	h.noInvalid()
}

func TestPreToolUseAskAsksEvenInFullAuto(t *testing.T) {
	a := &approvals{}
	h := newHarness(t, llmtest.Sequence(llmtest.Call("run_shell", `{"command": "touch x"}`), llmtest.Text("ok")), a)
	h.useHooks(hookJSON("PreToolUse", "run_shell", `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "touching files"}}'`, 0))
	h.cfg.Mode = tool.ModeFullAuto
	s, err := Create(h.cfg, "ask", h.ws, "")
	if err != nil {
		t.Skip("full-auto needs the sandbox: " + err.Error())
	}
	if _, err := s.Run(context.Background(), "touch"); err != nil {
		t.Fatal(err)
	}
	if len(a.reqs) != 1 || !strings.Contains(a.reqs[0].Note, "a PreToolUse hook asks you to confirm this call: touching files") {
		t.Fatalf("approval requests = %+v", a.reqs)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "x")); err != nil {
		t.Error("the approved call did not run")
	}
}
