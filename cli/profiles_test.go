package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// `tally profile add` keeps an endpoint; `tally run --profile` starts a
// session on it; `/model @PROFILE NAME` switches a stored session, and
// the ledger records the switch.
func TestProfilesAndSwitchingAStoredSession(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TALLY_KEYCHAIN", "off")
	main := llmtest.New(llmtest.Sequence(llmtest.Text("from main")))
	t.Cleanup(main.Close)
	local := llmtest.New(llmtest.Sequence(llmtest.Text("from local"), llmtest.Text("again from local")))
	t.Cleanup(local.Close)
	data, ws := t.TempDir(), t.TempDir()

	if _, errOut, code := runCLI(t, "profile", "add", "Bad Name", "--base-url", local.URL(), "--data", data); code != ExitFail || !strings.Contains(errOut, "is not a name") {
		t.Errorf("a bad name: exit %d, %q", code, errOut)
	}
	out, errOut, code := runCLI(t, "profile", "add", "local", "--base-url", local.URL(), "--model", "qwen3-8b", "--context-window", "32000", "--data", data)
	if code != ExitOK || !strings.Contains(out, "local\t"+local.URL()+"\tqwen3-8b\tkey (not set)") || !strings.Contains(out, "new sessions start on: main") {
		t.Fatalf("add: exit %d, %q %q", code, out, errOut)
	}
	if out, _, code = runCLI(t, "profile", "role", "summaries", "--profile", "local", "--data", data); code != ExitOK || !strings.Contains(out, "summaries use: local's model") {
		t.Errorf("role: exit %d, %q", code, out)
	}
	out, _, _ = runCLI(t, "profile", "list", "--json", "--data", data)
	var l profileListing
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Profiles) != 1 || l.Roles["summaries"].Profile != "local" {
		t.Errorf("list --json = %q (%v)", out, err)
	}

	// A session on the main connection, then switched to the profile.
	out, errOut, code = runCLI(t, "run", "--data", data, "--base-url", main.URL(), "--model", "main-model", "--workspace", ws, "--session", "sw", "hello")
	if code != ExitOK || !strings.Contains(out, "from main") {
		t.Fatalf("run: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "run", "--data", data, "--session", "sw", "/model @local")
	if code != ExitOK || !strings.Contains(out, "session sw now talks to qwen3-8b on profile local") {
		t.Fatalf("/model @local: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "run", "--data", data, "--session", "sw", "and now?")
	if code != ExitOK || !strings.Contains(out, "from local") {
		t.Fatalf("the switched session: exit %d, %q %q", code, out, errOut)
	}
	if reqs := local.Requests(); len(reqs) != 1 || reqs[0].Model != "qwen3-8b" || !strings.Contains(string(reqs[0].Body), "hello") {
		t.Errorf("the profile's server got %d requests", len(reqs))
	}
	out, _, _ = runCLI(t, "inspect", "--ledger", "--json", "--data", data, "sw")
	if !strings.Contains(out, `"repin": "main-model → qwen3-8b (local)"`) {
		t.Errorf("the ledger does not record the switch:\n%s", out)
	}

	// A new session on the profile from the start.
	out, errOut, code = runCLI(t, "run", "--data", data, "--profile", "local", "--workspace", ws, "hi")
	if code != ExitOK || !strings.Contains(out, "again from local") {
		t.Errorf("--profile local: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code = runCLI(t, "run", "--data", data, "--profile", "nope", "--workspace", ws, "hi"); code == ExitOK || !strings.Contains(errOut, `"nope" is not saved`) {
		t.Errorf("--profile nope: exit %d, %q", code, errOut)
	}
	if out, _, code = runCLI(t, "profile", "remove", "local", "--data", data); code != ExitOK || strings.Contains(out, "summaries use") {
		t.Errorf("remove: exit %d, %q", code, out)
	}
}
