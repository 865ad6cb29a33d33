package cli

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// `tally profile fallback` saves a chain and `tally profile list` prices
// it; `tally run --effort ... --fallback ...` goes on with the backup when
// the main connection fails for good, says so, sends the effort, and the
// ledger and inspect show both.
func TestRunFallsBackAndSendsTheEffort(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TALLY_KEYCHAIN", "off")
	down := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Reply{Fault: llmtest.Fault429} }),
		llmtest.WithRetryAfter(3600))
	t.Cleanup(down.Close)
	up := llmtest.New(llmtest.Sequence(llmtest.Text("from the backup")))
	t.Cleanup(up.Close)
	data, ws := t.TempDir(), t.TempDir()
	if _, errOut, code := runCLI(t, "profile", "add", "backup", "--base-url", up.URL(), "--model", "backup-model", "--data", data); code != ExitOK {
		t.Fatalf("add: %d %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "profile", "fallback", "backup", "nope", "--data", data); code != ExitFail || !strings.Contains(errOut, `"nope" is not a saved profile`) {
		t.Errorf("an unknown fallback: exit %d, %q", code, errOut)
	}
	out, errOut, code := runCLI(t, "profile", "fallback", "backup", "--data", data)
	if code != ExitOK || !strings.Contains(out, "fallback 1: backup (backup-model on 127.0.0.1") || !strings.Contains(out, "a new cache prefix, 50000 tokens re-sent at the miss price") {
		t.Fatalf("fallback: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "run", "--data", data, "--base-url", down.URL(), "--model", "main-model", "--workspace", ws,
		"--session", "fb", "--effort", "low", "--effort", "summaries=off", "--fallback", "backup", "hello")
	if code != ExitOK || !strings.Contains(out, "from the backup") {
		t.Fatalf("run: exit %d, %q %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "effort: low (summaries off)") || !strings.Contains(errOut, "falling back: main-model → backup-model (backup)") {
		t.Errorf("stderr does not say what happened: %q", errOut)
	}
	if reqs := up.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"enable_thinking":true,"reasoning_effort":"low"`) {
		t.Errorf("the backup's request: %+v", reqs)
	}
	out, _, _ = runCLI(t, "inspect", "--ledger", "--data", data, "fb")
	if !strings.Contains(out, "fell back main-model → backup-model (backup): rate limited") || !strings.Contains(out, "effort low") {
		t.Errorf("the ledger does not show the fallback and the effort:\n%s", out)
	}
	out, _, _ = runCLI(t, "inspect", "--data", data, "fb")
	if !strings.Contains(out, `"summaries": "off"`) || !strings.Contains(out, `"profile": "backup"`) || !strings.Contains(out, `"effort_changes"`) || !strings.Contains(out, `"role": "summaries"`) {
		t.Errorf("inspect shows no effort or chain:\n%s", out)
	}
	if _, errOut, code = runCLI(t, "run", "--data", data, "--session", "fb", "--effort", "turbo", "again"); code != ExitUsage || !strings.Contains(errOut, "not an effort level") {
		t.Errorf("a bad level: exit %d, %q", code, errOut)
	}
}
