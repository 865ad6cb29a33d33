package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestHooksListTrustAndRun: `tally hooks list` shows the user's hooks and
// the workspace's waiting for trust; `tally run` runs only the user's until
// `tally hooks trust`, and says why on stderr.
func TestHooksListTrustAndRun(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("OPENAI_API_KEY", "")
	var lastUser []string
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		lastUser = append(lastUser, req.LastUser())
		return llmtest.Text("ok")
	}))
	t.Cleanup(srv.Close)
	data, ws := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "tally"), 0o755)
	os.WriteFile(filepath.Join(cfg, "tally", "hooks.json"), []byte(`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from the user hook"}]}]}}`), 0o644)
	os.MkdirAll(filepath.Join(ws, ".tally"), 0o755)
	os.WriteFile(filepath.Join(ws, ".tally", "hooks.json"), []byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch ran", "timeout": 5}]}],
	  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch ran"}]}]}}`), 0o644)

	out, errOut, code := runCLI(t, "hooks", "list", "--data", data, "--workspace", ws)
	if code != ExitOK {
		t.Fatalf("list: exit %d, %q", code, errOut)
	}
	for _, want := range []string{"user\tUserPromptSubmit\t*\t1m0s\techo from the user hook", "workspace (not trusted)\tPreToolUse\tBash\t5s\ttouch ran", "tally hooks trust --workspace " + ws} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	run := func() string {
		t.Helper()
		_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "test-model", "--workspace", ws, "hi")
		if code != ExitOK {
			t.Fatalf("run: exit %d, %q", code, errOut)
		}
		return errOut
	}
	errOut = run()
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("an untrusted workspace hook ran")
	}
	if !strings.Contains(errOut, "hook: ") || !strings.Contains(errOut, "not trusted") || !strings.Contains(lastUser[0], "from the user hook") {
		t.Errorf("untrusted: stderr %q, request %q", errOut, lastUser[0])
	}
	if out, errOut, code := runCLI(t, "hooks", "trust", "--data", data, "--workspace", ws); code != ExitOK || !strings.Contains(out, "touch ran") {
		t.Fatalf("trust: exit %d, %q %q", code, out, errOut)
	}
	if errOut = run(); strings.Contains(errOut, "not trusted") {
		t.Errorf("trusted: stderr %q", errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err != nil {
		t.Error("the trusted workspace hook did not run")
	}
	if _, _, code := runCLI(t, "hooks", "untrust", "--data", data, "--workspace", ws); code != ExitOK {
		t.Errorf("untrust: exit %d", code)
	}
	if out, _, _ := runCLI(t, "hooks", "--data", data, "--workspace", ws); !strings.Contains(out, "not trusted") {
		t.Errorf("after untrust: %q", out)
	}
	if _, _, code := runCLI(t, "hooks", "list", "extra"); code != ExitUsage {
		t.Errorf("an extra argument: exit %d", code)
	}
}
