package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// lastToolResult is the text of the newest tool message of req, "" when
// it has none.
func lastToolResult(req *llmtest.Req) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "tool" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// callOnceThenReport makes one tool call, then answers with the call's
// result quoted after "RESULT: ".
func callOnceThenReport(name, args string) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() == 0 {
			return llmtest.Call(name, args)
		}
		return llmtest.Text("RESULT: " + lastToolResult(req))
	})
}

// TestRunNetworkLetsWebFetchReadALocalPage: with --network on and
// --fetch-local, web_fetch reads a page of a server on 127.0.0.1 as
// Markdown; without --network the refusal names the flag, and without
// --fetch-local the loopback refusal names that one.
func TestRunNetworkLetsWebFetchReadALocalPage(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body><h1>Release notes</h1><p>Version <b>1.2</b> is out.</p></body></html>")
	}))
	defer page.Close()
	srv := llmtest.New(callOnceThenReport("web_fetch", fmt.Sprintf(`{"url":%q}`, page.URL+"/notes")))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), workspace(t)
	run := func(flags ...string) (string, string, int) {
		t.Helper()
		args := append([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", ws, "--yes"}, flags...)
		return runCLI(t, append(args, "read the release notes")...)
	}

	out, errOut, code := run("--network", "on", "--fetch-local")
	if code != ExitOK {
		t.Fatalf("--network on --fetch-local: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "# Release notes") || !strings.Contains(out, "**1.2**") {
		t.Errorf("the page did not come back as Markdown:\n%s", out)
	}

	out, _, code = run()
	if code != ExitOK || !strings.Contains(out, "Network switch is off") || !strings.Contains(out, "--network on") {
		t.Errorf("without --network: exit %d, the refusal does not name --network on:\n%s", code, out)
	}

	out, _, _ = run("--network", "on")
	if !strings.Contains(out, "--fetch-local") || strings.Contains(out, "Release notes") {
		t.Errorf("without --fetch-local the loopback page was not refused with the flag named:\n%s", out)
	}
}

// writeSchema writes a JSON Schema asking for {"ok": boolean, "count":
// integer}.
func writeSchema(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "answer.schema.json")
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"},"count":{"type":"integer"}},"required":["ok","count"],"additionalProperties":false}`
	if err := os.WriteFile(p, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunJSONSchemaValidAnswer: the schema is in the prompt, a valid
// answer exits 0 and stdout holds only the JSON.
func TestRunJSONSchemaValidAnswer(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply {
		return llmtest.Text("```json\n{\"ok\": true, \"count\": 3}\n```")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	out, errOut, code := runCLI(t, "run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
		"--workspace", workspace(t), "--json-schema", writeSchema(t), "count the files")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != `{"ok":true,"count":3}`+"\n" {
		t.Errorf("stdout = %q, want the JSON alone", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `\"required\":[\"ok\",\"count\"]`) {
		t.Errorf("the schema is not in the prompt (%d requests)", len(reqs))
	}
}

// TestRunJSONSchemaInvalidAnswerIsRetriedOnceThenFails: an answer that
// does not validate is sent back once with the error; still invalid, the
// run exits ExitSchema. A retry that fixes it exits 0.
func TestRunJSONSchemaInvalidAnswerIsRetriedOnceThenFails(t *testing.T) {
	for _, c := range []struct {
		name   string
		second string
		code   int
	}{{"still invalid", `{"ok": "yes"}`, ExitSchema}, {"fixed", `{"ok": false, "count": 0}`, ExitOK}} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
				if strings.Contains(req.LastHuman(), "does not validate") {
					return llmtest.Text(c.second)
				}
				return llmtest.Text("There are three files.")
			}))
			defer srv.Close()
			t.Setenv("OPENAI_API_KEY", "sk-test")
			out, errOut, code := runCLI(t, "run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
				"--workspace", workspace(t), "--json-schema", writeSchema(t), "--json", "count the files")
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errOut)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want the answer and one retry", n)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var last struct {
				V      int             `json:"v"`
				Kind   string          `json:"kind"`
				Exit   int             `json:"exit"`
				JSON   json.RawMessage `json:"json"`
				Answer string          `json:"answer"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Kind != "result" || last.V != EventsVersion || last.Exit != c.code {
				t.Errorf("the last line is not the result (err %v): %s", err, lines[len(lines)-1])
			}
			if c.code == ExitSchema && !strings.Contains(errOut, "does not validate against the JSON Schema") {
				t.Errorf("stderr does not say the answer is invalid: %s", errOut)
			}
			if c.code == ExitOK && string(last.JSON) != `{"ok":false,"count":0}` {
				t.Errorf("the result's json = %s", last.JSON)
			}
		})
	}
	if _, _, code := runCLI(t, "run", "--json-schema", filepath.Join(t.TempDir(), "none.json"), "x"); code != ExitUsage {
		t.Errorf("a missing schema file: exit %d, want %d", code, ExitUsage)
	}
}

// TestRunJSONEventsCarryTheVersion: every line of --json has "v" first.
func TestRunJSONEventsCarryTheVersion(t *testing.T) {
	srv := llmtest.New(callOnceThenReport("list_dir", `{"path":"."}`))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	out, errOut, code := runCLI(t, "run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
		"--workspace", workspace(t), "--json", "list the files")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	kinds := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, fmt.Sprintf(`{"v":%d,"kind":`, EventsVersion)) {
			t.Fatalf("a line does not start with the version and kind: %s", line)
		}
		var e struct{ Kind string }
		json.Unmarshal([]byte(line), &e)
		kinds[e.Kind] = true
	}
	for _, k := range []string{"turn_start", "delta", "tool_start", "message", "usage", "turn_end", "result"} {
		if !kinds[k] {
			t.Errorf("no %q event in the stream", k)
		}
	}
}

// TestRunExitCodes: a denied approval, the step limit and a model that
// refuses the key each have their documented status.
func TestRunExitCodes(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() == 0 {
			return llmtest.Call("write_file", `{"path":"NOTES.md","content":"notes\n"}`)
		}
		return llmtest.Text("done")
	}), llmtest.WithAPIKey("sk-right"))
	defer srv.Close()
	ws := workspace(t)
	run := func(key string, flags ...string) (string, int) {
		t.Helper()
		t.Setenv("OPENAI_API_KEY", key)
		args := append([]string{"run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", ws}, flags...)
		_, errOut, code := runCLI(t, append(args, "write the notes")...)
		return errOut, code
	}
	if errOut, code := run("sk-right", "--mode", "ask"); code != ExitDenied || !strings.Contains(errOut, "were denied") {
		t.Errorf("a denied write: exit %d, want %d: %s", code, ExitDenied, errOut)
	}
	if errOut, code := run("sk-right", "--yes", "--max-steps", "1"); code != ExitBudget || !strings.Contains(errOut, "step limit") {
		t.Errorf("the step limit: exit %d, want %d: %s", code, ExitBudget, errOut)
	}
	if errOut, code := run("sk-wrong", "--yes"); code != ExitFail {
		t.Errorf("a refused key: exit %d, want %d: %s", code, ExitFail, errOut)
	}
	if errOut, code := run("sk-right", "--yes"); code != ExitOK {
		t.Errorf("an approved write: exit %d, want %d: %s", code, ExitOK, errOut)
	}
}
