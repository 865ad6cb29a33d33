package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// workspace makes a small Go project to work on.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	// A realistically sized source file: reads in real sessions return
	// hundreds of lines, not four.
	var src strings.Builder
	src.WriteString("package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&src, "\n// Scale%d multiplies v by %d and clamps the result to [lo, hi].\nfunc Scale%d(v, lo, hi int) int {\n\tr := v * %d\n\tif r < lo {\n\t\treturn lo\n\t}\n\treturn min(r, hi)\n}\n", i, i+2, i, i+2)
	}
	files := map[string]string{
		"go.mod":       "module calc\n\ngo 1.22\n",
		"calc/calc.go": src.String(),
		"README.md":    "# calc\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func sinceLastUser(req *llmtest.Req) int { return req.ToolResultsSinceHuman() }

// codingScript answers each turn with nine tool calls, then a summary.
func codingScript(turnLen int) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		k := sinceLastUser(req)
		if k >= turnLen-1 {
			return llmtest.Reply{Content: fmt.Sprintf("Done with this step after %d tool calls.", k), Reasoning: "wrap up"}
		}
		n := req.Index
		calls := []llmtest.ToolCall{
			{Name: "read_file", Arguments: `{"path":"calc/calc.go"}`},
			{Name: "list_dir", Arguments: `{"path":"."}`},
			{Name: "grep", Arguments: `{"pattern":"func [A-Z]","path":"."}`},
			{Name: "write_file", Arguments: fmt.Sprintf(`{"path":"notes/n%d.txt","content":"note %d\nline two\n"}`, n, n)},
			{Name: "edit_file", Arguments: fmt.Sprintf(`{"path":"notes/n%d.txt","old_string":"line two","new_string":"line 2"}`, n-1)},
			{Name: "run_shell", Arguments: `{"command":"echo checked"}`},
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"notes/n%d.txt","offset":1}`, n-2)},
			{Name: "list_dir", Arguments: `{"path":"notes"}`},
			{Name: "grep", Arguments: `{"pattern":"note","path":"notes"}`},
		}
		c := calls[k%len(calls)]
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{c}}
	})
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// rawMessages returns each request message's exact JSON bytes.
func rawMessages(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	return req.Messages
}

// TestScriptedSessionKeepsPrefix runs a 60-request coding session through
// `tally run` in six processes' worth of turns, and checks the request
// bytes only ever grow at the end and the simulated cache hits.
//
// The cache is simulated over DeepSeek-V4's chat template, the provider
// whose cache pricing Tally targets. (Qwen3.5's template re-renders earlier
// turns' assistant messages when a new user turn starts, so no client can
// keep those bytes; the strict late-system check runs on it below.)
func TestScriptedSessionKeepsPrefix(t *testing.T) {
	for _, mode := range []string{"tail", "append", "on-change"} {
		t.Run(mode, func(t *testing.T) { scriptedSession(t, mode) })
	}
}

func scriptedSession(t *testing.T, mode string) {
	srv := llmtest.New(codingScript(10), llmtest.WithTemplate(llmtest.TemplateDeepSeekV4))
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test-key-never-printed")
	for turn := 1; turn <= 6; turn++ {
		out, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat",
			"--session", "e2e", "--workspace", ws, "--yes", "--status-mode", mode, fmt.Sprintf("Turn %d: check calc/calc.go and keep notes.", turn))
		if code != 0 {
			t.Fatalf("turn %d exited %d: %s", turn, code, errOut)
		}
		if !strings.Contains(out, "Done with this step") {
			t.Fatalf("turn %d printed %q", turn, out)
		}
		if strings.Contains(out+errOut, "sk-test-key") {
			t.Fatal("the API key was printed")
		}
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("server rejected %d requests; first: %s", len(bad), bad[0].Error)
	}
	reqs := srv.Requests()
	if len(reqs) != 60 {
		t.Fatalf("got %d requests; want 60", len(reqs))
	}
	var prev []json.RawMessage
	for i, r := range reqs {
		msgs := rawMessages(t, r.Body)
		if last := r.Messages[len(r.Messages)-1]; mode != "on-change" && (last.Role != "user" || !strings.HasSuffix(last.Content, "</agent_status>")) {
			t.Fatalf("request %d does not end with the status block", i)
		}
		if mode == "on-change" {
			found := false
			for _, m := range r.Messages {
				found = found || strings.Contains(m.Content, "<agent_status")
			}
			if !found {
				t.Fatalf("request %d carries no status block", i)
			}
		}
		if mode == "tail" {
			// The last message holds the scratch zone (the status, joined
			// to a user message before it so user and assistant turns
			// alternate), replaced on every request; the log zone before
			// it only grows.
			msgs = msgs[:len(msgs)-1]
		}
		for j := 1; j < len(r.Messages); j++ {
			if r.Messages[j].Role == "user" && r.Messages[j-1].Role == "user" {
				t.Fatalf("request %d has two user messages in a row at %d", i, j)
			}
		}
		for j, m := range r.Messages {
			if j > 0 && m.Role == "system" {
				t.Fatalf("request %d has a system message at index %d", i, j)
			}
		}
		if len(msgs) < len(prev) {
			t.Fatalf("request %d has %d messages, fewer than the %d before", i, len(msgs), len(prev))
		}
		for j := range prev {
			if !bytes.Equal(prev[j], msgs[j]) {
				t.Fatalf("request %d message %d differs from the previous request:\n%s\n%s", i, j, prev[j], msgs[j])
			}
		}
		prev = msgs
	}
	st := srv.Stats()
	ratio := float64(st.Hit) / float64(st.Ideal)
	cost := (float64(st.Hit)*0.028 + float64(st.Prompt-st.Hit)*0.28) / 1e6
	t.Logf("%s: prompt %d tokens, hit %d, ideal %d: %.2f%% of ideal, hit ratio %.2f%%, input cost $%.4f at DeepSeek prices",
		mode, st.Prompt, st.Hit, st.Ideal, 100*ratio, 100*float64(st.Hit)/float64(st.Prompt), cost)
	if ratio < 0.99 {
		t.Errorf("cache hit tokens are %.2f%% of the ideal; want >= 99%%", 100*ratio)
	}
	// The session lists, inspects and exports.
	out, _, code := runCLI(t, "sessions", "--data", data)
	if code != 0 || !strings.HasPrefix(out, "e2e\t") {
		t.Errorf("sessions = %q (exit %d)", out, code)
	}
	blocks := 60 // status blocks sent: one per request, except on-change
	if mode == "on-change" {
		blocks = 0
		for _, r := range reqs[len(reqs)-1].Messages {
			if r.Role != "system" { // the system prompt explains the block
				blocks += strings.Count(r.Content, "<agent_status ")
			}
		}
	}
	out, _, code = runCLI(t, "export", "--data", data, "e2e")
	want := 6 + 60 + 54 // user turns, replies, tool results
	if mode != "tail" {
		want += blocks // the status blocks in the log
	}
	if code != 0 || strings.Count(out, "\n") != want {
		t.Errorf("export printed %d lines (exit %d); want %d", strings.Count(out, "\n"), code, want)
	}
	for _, format := range []string{"md", "html"} {
		doc, errOut, code := runCLI(t, "export", "--data", data, "--format", format, "e2e")
		if code != 0 || !strings.Contains(doc, "Cycle 1") || !strings.Contains(doc, "run_shell") {
			t.Errorf("export --format %s: exit %d, %q, %.300s", format, code, errOut, doc)
		}
	}
	out, _, code = runCLI(t, "inspect", "--data", data, "e2e")
	var rep inspectReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("inspect failed (exit %d): %.200s", code, out)
	}
	if rep.StatusAudit.Checked != blocks || len(rep.StatusAudit.Mismatches) > 0 || !strings.Contains(rep.Status, fmt.Sprintf(`state_version="%d"`, blocks+1)) {
		t.Errorf("inspect status audit: %+v, next status %q", rep.StatusAudit, rep.Status)
	}
	// The fixed prefix of the default catalogue, tool by tool, stays
	// under 3,500 tokens (issue 34): each tool's schema has its cost.
	if p := rep.Prefix; p.Total > 3500 || p.Total != p.SystemTokens+p.ToolsTokens || len(p.Tools) != len(rep.Request.Tools) || len(p.Tools) == 0 {
		t.Errorf("inspect prefix: %+v", p)
	} else {
		sum := 0
		for _, tc := range p.Tools {
			if tc.Tokens <= 0 || tc.Name == "" {
				t.Errorf("tool cost %+v", tc)
			}
			sum += tc.Tokens
		}
		if d := sum - p.ToolsTokens; d < -len(p.Tools) || d > 3*len(p.Tools) { // each counted alone carries its own brackets
			t.Errorf("the tools' costs sum to %d, the catalogue to %d", sum, p.ToolsTokens)
		}
		t.Logf("fixed prefix: %d tokens (system %d, %d tools %d)", p.Total, p.SystemTokens, len(p.Tools), p.ToolsTokens)
	}
	out, _, code = runCLI(t, "inspect", "--ledger", "--data", data, "e2e")
	if code != 0 || !strings.Contains(out, "60 requests") || !strings.Contains(out, "without a prefix cache $") {
		t.Errorf("inspect --ledger (exit %d):\n%s", code, out)
	}
	if len(rep.Request.Messages) < 1+6+60+54 || rep.ContextTokens <= 0 || rep.Window != 1_000_000 {
		t.Errorf("inspect: %d messages, %d tokens, window %d", len(rep.Request.Messages), rep.ContextTokens, rep.Window)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{"bogus"},
		{"run"},
		{"run", "--max-steps", "-1", "hi"},
		{"inspect"},
		{"export", "a", "b"},
		{"run", "--session", "bad id!", "--base-url", "http://127.0.0.1:1/v1", "--data", t.TempDir(), "hi"},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, c...)
		if code != ExitUsage {
			t.Errorf("%v exited %d; want %d (%s)", c, code, ExitUsage, errOut)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") > 0 && c[0] != "bogus" {
			t.Errorf("%v error is not one line: %q", c, errOut)
		}
	}
	if _, _, code := runCLI(t); code != ExitUsage {
		t.Errorf("no arguments exited %d", code)
	}
}

func TestRunWithoutEndpointSaysWhatToDo(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("DEEPSEEK_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	_, errOut, code := runCLI(t, "run", "--data", t.TempDir(), "hello")
	if code != ExitFail || !strings.Contains(errOut, "--base-url") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

func TestSecondInstanceGetsClearError(t *testing.T) {
	data := t.TempDir()
	st, err := storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	_, errOut, code := runCLI(t, "sessions", "--data", data)
	if code != ExitFail || !strings.Contains(errOut, "already open") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second instance waited %s", d)
	}
}

// TestKillMidStep kills a `tally run` process while a tool call runs, then
// reopens the session: every committed message is there, the open call gets
// an appended "interrupted" result, and the strict server accepts the next
// request.
func TestKillMidStep(t *testing.T) {
	if os.Getenv("TALLY_KILL_CHILD") != "" {
		os.Exit(Main(strings.Fields(os.Getenv("TALLY_KILL_CHILD")), os.Stdin, os.Stdout, os.Stderr))
	}
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if strings.Contains(req.LastHuman(), "slow") && sinceLastUser(req) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run_shell", Arguments: `{"command":"sleep 30"}`}}}
		}
		return llmtest.Text("fine")
	}))
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	// The tail placement keeps the status out of the log, so the counts
	// below are the conversation's own messages.
	args := fmt.Sprintf("run --data %s --base-url %s --session k --workspace %s --yes --status-mode tail slow", data, srv.URL(), ws)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillMidStep$")
	cmd.Env = append(os.Environ(), "TALLY_KILL_CHILD="+args, "OPENAI_API_KEY=sk-x")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "run_shell") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("child never started the tool: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	st, err := storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatalf("store does not reopen after kill -9: %v", err)
	}
	recs, err := st.Log("k", 1)
	st.Close()
	if err != nil || len(recs) != 2 {
		t.Fatalf("after kill: %d messages (%v); want the user message and the call", len(recs), err)
	}
	_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--session", "k", "--workspace", ws, "--yes", "--status-mode", "tail", "carry on")
	if code != 0 {
		t.Fatalf("continuing after the crash failed: %s", errOut)
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("strict server rejected the repaired transcript: %s", bad[0].Error)
	}
	st, _ = storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	defer st.Close()
	recs, _ = st.Log("k", 1)
	var msgs []transcript.Message
	for _, r := range recs {
		m, _ := transcript.Decode(r.Data)
		msgs = append(msgs, m)
	}
	if len(msgs) != 5 || msgs[2].Kind != transcript.KindRepair || !strings.Contains(msgs[2].Text(), "interrupted") {
		t.Fatalf("repaired log: %+v", msgs)
	}
	if err := transcript.CheckPairing(msgs); err != nil {
		t.Error(err)
	}
}
