package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/sandbox"
)

func TestMain(m *testing.M) { sandbox.RunTests(m) }

const sample = `{"permissions": {"allow": []}, "hooks": {
  "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}],
  "PreToolUse": [
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 10}]},
    {"matcher": "run_shell|edit_file", "hooks": [{"type": "command", "command": "./any.sh"}, {"type": "prompt", "prompt": "x"}]},
    {"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": "./gh.sh", "timeout": -3}]},
    {"matcher": "([", "hooks": [{"type": "command", "command": "./bad.sh"}]}
  ],
  "Notification": [{"hooks": [{"type": "command", "command": "notify"}]}]
}}`

func TestParseKeepsWhatItCanAndSaysWhatNot(t *testing.T) {
	hooks, notes, err := Parse([]byte(sample), SourceUser, "/u/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, h := range hooks {
		cmds = append(cmds, string(h.Event)+":"+h.Command)
	}
	want := "PreToolUse:./guard.sh PreToolUse:./any.sh PreToolUse:./gh.sh PreToolUse:./bad.sh Stop:./stop.sh"
	if got := strings.Join(cmds, " "); got != want {
		t.Fatalf("hooks = %s; want %s", got, want)
	}
	if hooks[0].Limit() != 10*time.Second || hooks[2].Limit() != DefaultTimeout || hooks[0].ID != "user/PreToolUse/0/0" {
		t.Errorf("hook 0 = %+v, hook 2 limit %s", hooks[0], hooks[2].Limit())
	}
	all := strings.Join(notes, "\n")
	for _, w := range []string{`"Notification" hooks are ignored`, `type is "prompt"`, "not a positive number", "not a valid regular expression"} {
		if !strings.Contains(all, w) {
			t.Errorf("notes lack %q:\n%s", w, all)
		}
	}
	for _, bad := range []string{`{"hooks": 3}`, `{"hooks": {"Stop": {"x": 1}}}`, `not json`, `{"hooks": {"Stop": [{"matcher": 5}]}}`} {
		if _, _, err := Parse([]byte(bad), SourceUser, "f"); err == nil || !strings.Contains(err.Error(), "f") {
			t.Errorf("Parse(%s) = %v; want an error naming the file", bad, err)
		}
	}
	if h, n, err := Parse([]byte("  \n"), SourceUser, "f"); h != nil || n != nil || err != nil {
		t.Errorf("an empty file = %v %v %v", h, n, err)
	}
}

func TestMatchers(t *testing.T) {
	hooks, _, _ := Parse([]byte(sample), SourceUser, "f")
	names := func(tool string) string {
		var out []string
		for _, h := range Select(hooks, PreToolUse, tool) {
			out = append(out, h.Command)
		}
		return strings.Join(out, " ")
	}
	cases := map[string]string{
		"run_shell":             "./guard.sh ./any.sh",
		"edit_file":             "./any.sh",
		"read_file":             "",
		"mcp__github__issues":   "./gh.sh",
		"mcp__gitlab__issues":   "",
		"([":                    "./bad.sh",
		"run_shell_and_more":    "",
		"xrun_shell|edit_filex": "",
	}
	for tool, want := range cases {
		if got := names(tool); got != want {
			t.Errorf("%s matches %q; want %q", tool, got, want)
		}
	}
	if got := Select(hooks, Stop, "anything"); len(got) != 1 {
		t.Errorf("Stop hooks = %v", got)
	}
	// A hook built by hand still matches by regular expression.
	h := Hook{Event: PostToolUse, Matcher: "Edit|Write", Command: "x"}
	if !h.Matches("write_file") || !h.Matches("edit_file") || h.Matches("run_shell") {
		t.Error("aliases do not match a hand-made hook")
	}
}

func TestInterpret(t *testing.T) {
	run := func(ev Event, exit int, stdout, stderr string) Outcome {
		return Interpret(Run{Event: ev, Command: "c", Exit: exit, Stdout: stdout, Stderr: stderr})
	}
	if o := run(PreToolUse, 2, "", "no rm -rf\n"); !o.Block || o.Permission != Deny || o.Reason != "no rm -rf" {
		t.Errorf("exit 2 = %+v", o)
	}
	if o := run(SessionStart, 2, "", "x"); o.Blocked() || o.Error == "" {
		t.Errorf("SessionStart exit 2 = %+v", o)
	}
	if o := run(PostToolUse, 1, "", "boom"); o.Blocked() || !strings.Contains(o.Error, "status 1: boom") {
		t.Errorf("exit 1 = %+v", o)
	}
	if o := run(UserPromptSubmit, 0, "remember the tests\n", ""); o.Context != "remember the tests" {
		t.Errorf("plain stdout = %+v", o)
	}
	if o := run(PostToolUse, 0, "plain", ""); o.Context != "" {
		t.Errorf("plain PostToolUse stdout = %+v", o)
	}
	o := run(PreToolUse, 0, `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "why", "updatedInput": {"command": "ls"}}}`, "")
	if o.Permission != Ask || o.PermissionReason != "why" || string(o.UpdatedInput) != `{"command":"ls"}` || o.Error != "" {
		t.Errorf("JSON reply = %+v", o)
	}
	o = run(Stop, 0, `{"decision": "block", "reason": "run the tests", "continue": true}`, "")
	if !o.Block || o.Reason != "run the tests" || o.Stop {
		t.Errorf("Stop block = %+v", o)
	}
	o = run(PreToolUse, 0, `{"continue": false, "stopReason": "enough", "hookSpecificOutput": {"permissionDecision": "maybe", "updatedInput": [1]}}`, "")
	if !o.Stop || o.StopReason != "enough" || o.Permission != "" || o.UpdatedInput != nil || !strings.Contains(o.Error, "permissionDecision") || !strings.Contains(o.Error, "updatedInput") {
		t.Errorf("bad fields = %+v", o)
	}
	if o := run(PreToolUse, 0, `{"continue": "no", "decision": 7}`, ""); o.Blocked() || !strings.Contains(o.Error, "continue") {
		t.Errorf("wrong types = %+v", o)
	}
	if o := run(PostToolUse, 0, `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "x"}}`, ""); o.Context != "" || o.Error == "" {
		t.Errorf("another event's output = %+v", o)
	}
	c := Combine([]Outcome{{Permission: Allow, UpdatedInput: json.RawMessage(`{"a":1}`)}, {Permission: Deny, PermissionReason: "no"}, {Permission: Ask, Context: "c"}})
	if c.Permission != Deny || c.Context != "c" || string(c.UpdatedInput) != `{"a":1}` {
		t.Errorf("Combine = %+v", c)
	}
}

// Hostile output never panics, whatever the bytes.
func TestInterpretNeverPanics(t *testing.T) {
	for _, out := range []string{"{", "{}", `{"hookSpecificOutput": 1}`, `{"hookSpecificOutput": {"updatedInput": null}}`, "\xff\xfe{", `{"continue": false}`, strings.Repeat("{", 10000)} {
		for _, ev := range Events {
			Interpret(Run{Event: ev, Stdout: out})
		}
	}
}

func runner(t *testing.T) (Runner, string) {
	t.Helper()
	ws := t.TempDir()
	ok, _ := sandbox.Available()
	return Runner{Env: tool.Env{Workspace: ws, RequireSandbox: ok}}, ws
}

func TestRunReadsStdinAndGetsTheAllowListedEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	r, ws := runner(t)
	h := Hook{ID: "u/1", Event: PreToolUse, Command: `cat > input.json; echo "key=${OPENAI_API_KEY:-none} dir=$CLAUDE_PROJECT_DIR"; echo err >&2; exit 3`}
	in := Input{SessionID: "s1", Cwd: ws, HookEventName: PreToolUse, ToolName: "run_shell", ToolInput: ToolInput(`{"command": "ls"}`)}
	run := r.Run(context.Background(), h, in)
	if run.Exit != 3 || run.Err != "" || strings.TrimSpace(run.Stderr) != "err" {
		t.Fatalf("run = %+v", run)
	}
	if want := "key=none dir=" + ws; strings.TrimSpace(run.Stdout) != want {
		t.Errorf("stdout = %q; want %q", run.Stdout, want)
	}
	data, err := os.ReadFile(filepath.Join(ws, "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["session_id"] != "s1" || got["hook_event_name"] != "PreToolUse" || got["tool_name"] != "run_shell" ||
		got["tool_input"].(map[string]any)["command"] != "ls" || got["transcript_path"] != "" {
		t.Errorf("input = %s", data)
	}
	if s := run.Short(100); !strings.HasPrefix(s, "exit 3: err") {
		t.Errorf("Short = %q", s)
	}
}

func TestRunStopsAHookThatTimesOut(t *testing.T) {
	r, ws := runner(t)
	h := Hook{Event: Stop, Command: "(sleep 30; touch late) & sleep 30", Timeout: 300 * time.Millisecond}
	start := time.Now()
	run := r.Run(context.Background(), h, Input{})
	if !run.TimedOut || run.Exit != -1 || !strings.Contains(Interpret(run).Error, "timed out") {
		t.Fatalf("run = %+v", run)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timed-out hook took %s", d)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(ws, "late")); err == nil {
		t.Error("a process of the hook outlived it")
	}
}

func TestRunCapsOutput(t *testing.T) {
	r, _ := runner(t)
	r.OutputLimit = 100
	run := r.Run(context.Background(), Hook{Event: Stop, Command: "head -c 5000 /dev/zero | tr '\\0' a"}, Input{})
	if len(run.Stdout) > 200 || !strings.Contains(run.Stdout, "4900 more bytes") {
		t.Errorf("stdout = %q", run.Stdout)
	}
}

func TestRunIsSandboxed(t *testing.T) {
	if ok, why := sandbox.Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	r, _ := runner(t)
	outside := t.TempDir()
	run := r.Run(context.Background(), Hook{Event: Stop, Command: "echo x > " + filepath.Join(outside, "f")}, Input{})
	if run.Exit == 0 {
		t.Errorf("a hook wrote outside the workspace: %+v", run)
	}
}

func TestWorkspaceTrustCoversTheScripts(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".tally", "hooks"), 0o755)
	cfg := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR/.tally/hooks/stop.sh\" --flag=.tally/hooks/data.txt"}]}]}}`
	os.WriteFile(WorkspacePath(ws), []byte(cfg), 0o644)
	os.WriteFile(filepath.Join(ws, ".tally", "hooks", "stop.sh"), []byte("exit 0\n"), 0o755)
	os.WriteFile(filepath.Join(ws, ".tally", "hooks", "data.txt"), []byte("a"), 0o644)
	hooks, wf, _, err := LoadWorkspace(ws, nil)
	if err != nil || hooks != nil || !wf.NeedsTrust || wf.Hash == "" || len(wf.Preview) != 1 {
		t.Fatalf("untrusted = %v %+v %v", hooks, wf, err)
	}
	trusted := wf.Hash
	hooks, wf, _, _ = LoadWorkspace(ws, func(h string) bool { return h == trusted })
	if len(hooks) != 1 || wf.NeedsTrust || hooks[0].Source != SourceWorkspace {
		t.Fatalf("trusted = %v %+v", hooks, wf)
	}
	for _, f := range []string{"stop.sh", "data.txt"} {
		os.WriteFile(filepath.Join(ws, ".tally", "hooks", f), []byte("exit 1\n"), 0o755)
		_, wf, _, _ = LoadWorkspace(ws, func(h string) bool { return h == trusted })
		if !wf.NeedsTrust || wf.Hash == trusted {
			t.Errorf("editing %s kept the trust", f)
		}
		trusted = wf.Hash
	}
	// A symlinked hooks file is refused.
	ws2 := t.TempDir()
	os.MkdirAll(filepath.Join(ws2, ".tally"), 0o755)
	os.Symlink(WorkspacePath(ws), WorkspacePath(ws2))
	if _, _, _, err := LoadWorkspace(ws2, nil); err == nil {
		t.Error("a symlinked workspace hooks file was read")
	}
}
