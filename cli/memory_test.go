package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestMemoryCommands: tally memory propose asks the session's model over
// real HTTP, list shows what waits with its tokens, edit changes one,
// accept writes it to .tally/memory.md, reject drops one; the next
// session's first request carries the accepted entry and no request the
// rejected one.
func TestMemoryCommands(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "Propose what is worth remembering") {
			return llmtest.Text(`{"entries": [{"kind": "build", "text": "Run the tests with make check.", "source": 1},
				{"kind": "pitfall", "text": "Never trust the vendored clock.", "source": 1}, {"kind": "nonsense"}]}`)
		}
		return llmtest.Text("done")
	}))
	defer srv.Close()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), t.TempDir()
	common := []string{"--data", data, "--base-url", srv.URL(), "--model", "qwen3-8b", "--workspace", ws}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, errOut)
		}
		return out
	}
	run(append([]string{"run", "--session", "one"}, append(common, "Fix the build")...)...)
	out := run(append([]string{"memory", "propose", "one"}, common...)...)
	if !strings.Contains(out, "Proposed 2 entries") || !strings.Contains(out, `note: entry 3 was dropped: "nonsense" is not a kind of memory`) {
		t.Fatalf("propose:\n%s", out)
	}
	// At the end of a run: the same entries again are dropped as pending.
	_, errOut, code := runCLI(t, append([]string{"run", "--session", "one", "--propose-memory"}, append(common, "Go on")...)...)
	if code != 0 || !strings.Contains(errOut, "memory: 0 entries new") || !strings.Contains(errOut, "already pending or remembered") {
		t.Fatalf("run --propose-memory: exit %d\n%s", code, errOut)
	}
	out = run("memory", "list", "--data", data, "--workspace", ws)
	if !strings.Contains(out, "1     ") || !strings.Contains(out, "[build] Run the tests with make check.") || !strings.Contains(out, "from session one, turn 1") || !strings.Contains(out, "Accepted for "+ws+" (0 tokens") {
		t.Errorf("list:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "memory", "accept", "x", "--data", data); code != 2 || !strings.Contains(errOut, "not the ID") {
		t.Errorf("a bad ID: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "memory", "edit", "1", "  ", "--data", data); code != 1 {
		t.Errorf("an empty edit: exit %d", code)
	}
	run("memory", "edit", "1", "Run the tests with `make check` (not go test).", "--kind", "build", "--data", data)
	out = run("memory", "accept", "1", "--data", data)
	if !strings.Contains(out, filepath.Join(ws, ".tally", "memory.md")) {
		t.Errorf("accept:\n%s", out)
	}
	run("memory", "reject", "2", "--data", data)
	if _, errOut, code := runCLI(t, "memory", "reject", "2", "--data", data); code != 1 || !strings.Contains(errOut, "no memory proposal 2 is pending") {
		t.Errorf("a second reject: exit %d, %q", code, errOut)
	}
	var listed struct {
		Pending, Accepted []struct {
			Text   string `json:"text"`
			Tokens int    `json:"tokens"`
		}
		PrefixTokens int `json:"prefix_tokens"`
	}
	if err := json.Unmarshal([]byte(run("memory", "--json", "--data", data, "--workspace", ws)), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Pending) != 0 || len(listed.Accepted) != 1 || listed.Accepted[0].Tokens < 5 || listed.PrefixTokens <= listed.Accepted[0].Tokens {
		t.Errorf("list --json: %+v", listed)
	}
	before := len(srv.Requests())
	run(append([]string{"run", "--session", "two"}, append(common, "Add a Sub function")...)...)
	for i, r := range srv.Requests() {
		body := string(r.Body)
		if strings.Contains(body, "vendored clock") {
			t.Errorf("request %d carries the rejected entry", i)
		}
		if strings.Contains(body, "(not go test)") != (i == before) {
			t.Errorf("request %d: carries the accepted entry %v", i, strings.Contains(body, "(not go test)"))
		}
	}
	file, _ := os.ReadFile(filepath.Join(ws, ".tally", "memory.md"))
	if !strings.Contains(string(file), "- [build] Run the tests with `make check` (not go test). <!-- session one, turn 1 -->") {
		t.Errorf("memory.md:\n%s", file)
	}
}
