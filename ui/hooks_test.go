package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/ui/extensions"
)

// A workspace's hooks file asks for trust and shows what it would run;
// Settings → Hooks lists every hook with its source and last run; a hook
// that refuses a call raises a banner saying so.
func TestHooksTrustBannerSettingsAndABlockingHook(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("LANGUAGE", "en") // the sandbox helper (this binary) then logs no locale error on the hook's stderr
	os.MkdirAll(filepath.Join(cfg, "tally"), 0o755)
	writeFile(t, filepath.Join(cfg, "tally"), "hooks.json",
		`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo no commands today >&2; exit 2"}]}]}}`)
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("run_shell", `{"command": "ls"}`), llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := filepath.Join(h.dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".tally"), 0o755)
	writeFile(t, filepath.Join(ws, ".tally"), "hooks.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch ran"}]}]}}`)
	h.newSession()
	h.waitFor("the trust banner", func() bool { return strings.Contains(h.ui.banner.Text(), hookTrustText) })
	st := h.ui.live.sess.Hooks().Status()
	if !st.Workspace.NeedsTrust || len(st.Hooks) != 1 {
		t.Fatalf("status %+v", st)
	}

	h.ui.showHooksSettings()
	waitShown[*extensions.Hooks](h, "the hooks dialog")
	h.waitFor("the hooks", func() bool {
		return h.shows("PreToolUse on Bash  (yours)") && h.shows("Stop  (workspace, not trusted)")
	})
	for _, want := range []string{"PreToolUse on Bash  (yours)", "Stop  (workspace, not trusted)", "not run in this session yet", "Review the workspace's hooks…"} {
		if !h.shows(want) {
			t.Errorf("the hooks dialog does not show %q", want)
		}
	}

	h.send("list the files")
	h.waitFor("the refusal banner", func() bool { return strings.Contains(h.ui.banner.Text(), "refused run_shell: no commands today") })
	h.waitIdle()
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the untrusted workspace hook ran")
	}
	h.tapInDialog("Close")
	h.ui.showHooksSettings()
	h.waitFor("the last run", func() bool { return h.shows("exit 2: no commands today — refused the call") })

	h.ui.reviewHooksTrust(h.ui.live, st.Workspace)
	if !h.shows("runs touch ran") {
		t.Error("the trust prompt does not show the command it would run")
	}
}

// A PreToolUse hook that changes a call's arguments: the approval card
// asks about the changed call and says what the hook changed.
func TestApprovalCardShowsTheHooksChange(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("LANGUAGE", "en")
	os.MkdirAll(filepath.Join(cfg, "tally"), 0o755)
	reply := `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -la"}}}`
	cmd, _ := json.Marshal("echo '" + reply + "'")
	writeFile(t, filepath.Join(cfg, "tally"), "hooks.json",
		`{"hooks": {"PreToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": `+string(cmd)+`}]}]}}`)
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("run_shell", `{"command": "ls"}`), llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("list the files")
	it := h.pending()
	want := `changed by a hook: command: "ls" → "ls -la"`
	if !strings.Contains(it.Approval.Req.Note, want) || !strings.Contains(it.Approval.Req.Arguments, "ls -la") {
		t.Fatalf("the approval = %+v; want the note %q", it.Approval.Req, want)
	}
	h.waitFor("the card's note", func() bool { c := h.card(it); return c != nil && strings.Contains(c.Note.Text, want) })
	it.Approval.Answer(tool.Deny)
	h.waitIdle()
}
