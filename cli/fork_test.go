package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestForkCommandListsItsLineage: `tally fork u --at 1` starts a session
// from turn 1 of u in the same folder without touching a file; `tally
// sessions` shows where it comes from (text and JSON), a turn u does not
// have is refused in one sentence, and the fork goes on with tally run.
func TestForkCommandListsItsLineage(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	common := []string{"--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat"}
	for _, text := range []string{"turn one", "turn two"} {
		if _, errOut, code := runCLI(t, append(append([]string{"run"}, common...), "--session", "u", "--workspace", ws, "--yes", text)...); code != 0 {
			t.Fatalf("run %q exited %d: %s", text, code, errOut)
		}
	}
	out, errOut, code := runCLI(t, "fork", "--data", data, "u", "--at", "1", "--title", "other way")
	if code != 0 {
		t.Fatalf("fork exited %d: %s", code, errOut)
	}
	mustHave(t, out, "forked from u at turn 1", "no file was touched", "continue it with: tally run --session ")
	id := strings.Fields(out)[0]
	if _, err := os.Stat(filepath.Join(ws, "README.md")); err == nil {
		t.Error("README.md, which turn 2 removed, is back: the fork touched the folder")
	}

	out, _, _ = runCLI(t, "sessions", "--data", data)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, id+"\t") {
			line = l
		}
	}
	if !strings.Contains(line, "other way") || !strings.HasSuffix(line, "\tforked from u at turn 1") {
		t.Errorf("tally sessions shows the fork as %q", line)
	}
	out, _, _ = runCLI(t, "sessions", "--data", data, "--json")
	found := false
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r sessionRow
		if json.Unmarshal([]byte(l), &r) == nil && r.ID == id {
			found = r.ForkOf == "u" && r.ForkTurn == 1
		}
	}
	if !found {
		t.Errorf("tally sessions --json does not give the fork's lineage:\n%s", out)
	}

	_, errOut, code = runCLI(t, "fork", "--data", data, "u", "--at", "9")
	if code != ExitFail || !strings.Contains(errOut, "has no turn 9; its turns are 1 to 2") {
		t.Errorf("fork --at 9 exited %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, "fork", "--data", data, "u", "--at", "x")
	if code != ExitUsage || !strings.Contains(errOut, "--at must be a turn number") {
		t.Errorf("fork --at x exited %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, append(append([]string{"run"}, common...), "--session", id, "--yes", "turn three")...); code != 0 {
		t.Fatalf("run in the fork exited %d: %s", code, errOut)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Hit == 0 {
		t.Error("the fork's requests got nothing from the cache")
	}
}

// TestForkRefusesATurnOfAnEarlierCycle: after a new cycle the turns before
// it are refused in one sentence naming the turns that can be forked,
// and the new cycle's own turn forks.
func TestForkRefusesATurnOfAnEarlierCycle(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	common := []string{"--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--session", "u", "--workspace", ws, "--yes"}
	for _, text := range []string{"turn one", "/new-cycle", "hello again"} {
		if _, errOut, code := runCLI(t, append(append([]string{"run"}, common...), text)...); code != 0 {
			t.Fatalf("run %q exited %d: %s", text, code, errOut)
		}
	}
	_, errOut, code := runCLI(t, "fork", "--data", data, "u", "--at", "1")
	if code != ExitFail || !strings.Contains(errOut, "turn 1 belongs to cycle 1 of session u, whose prompt is no longer stored, so only turn 2 of the current cycle 2 can be forked") {
		t.Errorf("fork --at 1 after a new cycle exited %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "fork", "--data", data, "u")
	if code != 0 || !strings.Contains(out, "forked from u at turn 2") {
		t.Errorf("fork of the new cycle's turn exited %d: %s%s", code, out, errOut)
	}
}
