package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStdioToolsListedAndCalled(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"local": stdioServer(t, "basic")}, Options{})
	m.Start(context.Background())
	if st := status(t, m, "local"); st.State != StateConnected || st.Tools != 7 {
		t.Fatalf("status = %+v, want connected with 7 tools", st)
	}
	want := []string{"mcp__local__crash", "mcp__local__echo", "mcp__local__env", "mcp__local__hang",
		"mcp__local__picture", "mcp__local__refuse", "mcp__local__structured"}
	var got []string
	for _, tl := range m.Pending() {
		got = append(got, tl.Spec().Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pending = %v, want %v", got, want)
	}
	if again := m.Pending(); len(again) != 0 {
		t.Errorf("second Pending handed out %d tools again", len(again))
	}

	echo, _ := m.Lookup("mcp__local__echo")
	spec := echo.Spec()
	if spec.Description != "Echo the text back." {
		t.Errorf("description = %q", spec.Description)
	}
	var schema map[string]any
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema = %s (%v), want an object schema", spec.Parameters, err)
	}
	if _, ok := schema["properties"].(map[string]any)["text"]; !ok {
		t.Errorf("schema lost the server's property: %s", spec.Parameters)
	}

	cases := []struct {
		tool, args, want string
		isErr            bool
	}{
		{"mcp__local__echo", `{"text":"hi"}`, "echo: hi", false},
		{"mcp__local__structured", `{}`, `{"count":3}`, false},
		{"mcp__local__picture", `{}`, "a red square\n[image image/png, 7 bytes, not shown]\n[resource link file:///tmp/x.txt (x)]", false},
		{"mcp__local__refuse", `{}`, "no such record", true},
	}
	for _, c := range cases {
		content, isErr := run(t, m, c.tool, c.args)
		if content != c.want || isErr != c.isErr {
			t.Errorf("%s = %q (error %v), want %q (error %v)", c.tool, content, isErr, c.want, c.isErr)
		}
	}
	// Arguments that break the server's schema give an error result.
	if content, isErr := run(t, m, "mcp__local__echo", `{"text":5}`); !isErr {
		t.Errorf("bad arguments gave %q (error %v)", content, isErr)
	}
}

func TestReadOnlyAnnotationAndApproval(t *testing.T) {
	servers := map[string]ServerConfig{"plain": stdioServer(t, "basic")}
	trusting := stdioServer(t, "basic")
	trusting.AllowReadOnly = true
	servers["trusting"] = trusting
	m := newManager(t, servers, Options{})
	m.Start(context.Background())

	need := func(name string) bool {
		tl, ok := m.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		return tl.NeedsApproval()
	}
	if !need("mcp__plain__env") {
		t.Error("a read-only tool of a server whose read-only tools were not allowed runs without approval")
	}
	if need("mcp__trusting__env") {
		t.Error("a read-only tool of an allowed server still needs approval")
	}
	if !need("mcp__trusting__echo") {
		t.Error("a tool not annotated read-only runs without approval")
	}
	m.SetAllowReadOnly("plain", true)
	if need("mcp__plain__env") {
		t.Error("SetAllowReadOnly(true) did not take effect")
	}
	m.SetAllowReadOnly("trusting", false)
	if !need("mcp__trusting__env") {
		t.Error("SetAllowReadOnly(false) did not take effect")
	}
	env, _ := m.Lookup("mcp__plain__env")
	if a := env.Annotations(); !a.ReadOnly || a.Destructive || env.Server() != "plain" || env.RemoteName() != "env" {
		t.Errorf("annotations %+v, server %q, remote %q", a, env.Server(), env.RemoteName())
	}
	echo, _ := m.Lookup("mcp__plain__echo")
	if a := echo.Annotations(); a.ReadOnly || !a.Destructive || !a.OpenWorld {
		t.Errorf("unannotated tool has annotations %+v, want the protocol's defaults", a)
	}
}

func TestEnvironmentDoesNotLeak(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
	t.Setenv("TALLY_TEST_PASSED_ON_PURPOSE", "purposeful")
	t.Setenv("SOME_UNLISTED_VAR", "unlisted")
	sc := stdioServer(t, "basic")
	sc.Env["MY_TOKEN"] = "${TALLY_TEST_PASSED_ON_PURPOSE}"
	m := newManager(t, map[string]ServerConfig{"local": sc}, Options{})
	m.Start(context.Background())
	content, isErr := run(t, m, "mcp__local__env", `{}`)
	if isErr {
		t.Fatalf("env failed: %s", content)
	}
	for _, bad := range []string{"OPENAI_API_KEY", "sk-test-must-not-leak", "SOME_UNLISTED_VAR"} {
		if strings.Contains(content, bad) {
			t.Errorf("the server's environment holds %s:\n%s", bad, content)
		}
	}
	lines := strings.Split(content, "\n")
	for _, want := range []string{"MY_TOKEN=purposeful", serverEnv + "=basic"} {
		if !slices.Contains(lines, want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, content)
		}
	}
	if os.Getenv("PATH") != "" && !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "PATH=") }) {
		t.Errorf("the server's environment lacks PATH:\n%s", content)
	}
}

func TestCrashMidCallRestartsOnce(t *testing.T) {
	logs := t.TempDir()
	// OnStatus runs on the server's watch goroutine, so what it saw is
	// shared with the test and guarded.
	var (
		mu   sync.Mutex
		seen []ServerStatus
	)
	opts := Options{
		LogPath: func(s string) string { return filepath.Join(logs, s+".log") },
		OnStatus: func(st ServerStatus) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, st)
		},
	}
	m := newManager(t, map[string]ServerConfig{"local": stdioServer(t, "basic")}, opts)
	m.Start(context.Background())

	content, isErr := run(t, m, "mcp__local__crash", `{}`)
	if !isErr || !strings.Contains(content, `"local" stopped during the call`) || !strings.Contains(content, "restarted") {
		t.Fatalf("crash result = %q (error %v)", content, isErr)
	}
	// The crash is claimed at once; its reason, with the server's last
	// error output, follows once that output reached the log (at most
	// stderrGrace later).
	st := status(t, m, "local")
	for deadline := time.Now().Add(2 * stderrGrace); st.Reason == "" && time.Now().Before(deadline); st = status(t, m, "local") {
		time.Sleep(10 * time.Millisecond)
	}
	if st.State != StateCrashed || !strings.Contains(st.Reason, "boom: simulated crash") {
		t.Fatalf("status after crash = %+v, want crashed with the last stderr line", st)
	}
	log, err := os.ReadFile(filepath.Join(logs, "local.log"))
	if err != nil || !strings.Contains(string(log), "boom: simulated crash") {
		t.Errorf("log = %q (%v), want the server's stderr", log, err)
	}

	// The next call restarts the server.
	if content, isErr := run(t, m, "mcp__local__echo", `{"text":"back"}`); isErr || content != "echo: back" {
		t.Fatalf("call after the crash = %q (error %v), want the restarted server's answer", content, isErr)
	}
	if st := status(t, m, "local"); st.State != StateConnected || st.Restarts != 1 {
		t.Fatalf("status after restart = %+v", st)
	}

	// A second crash is final.
	if content, isErr := run(t, m, "mcp__local__crash", `{}`); !isErr || !strings.Contains(content, "will not be restarted") {
		t.Fatalf("second crash = %q (error %v)", content, isErr)
	}
	if st := status(t, m, "local"); st.State != StateFailed {
		t.Fatalf("status after the second crash = %+v, want failed", st)
	}
	content, isErr = run(t, m, "mcp__local__echo", `{"text":"x"}`)
	if !isErr || !strings.Contains(content, "continue without its tools") {
		t.Fatalf("call after the second crash = %q (error %v)", content, isErr)
	}
	// After Close nothing is restarted.
	m2 := newManager(t, map[string]ServerConfig{"local": stdioServer(t, "basic")}, Options{})
	m2.Start(context.Background())
	run(t, m2, "mcp__local__crash", `{}`)
	m2.Close()
	if content, isErr := run(t, m2, "mcp__local__echo", `{"text":"x"}`); !isErr || !strings.Contains(content, "was stopped") {
		t.Errorf("call after Close = %q (error %v), want no restart", content, isErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(seen, func(s ServerStatus) bool { return s.State == StateCrashed }) {
		t.Errorf("OnStatus never reported the crash: %+v", seen)
	}
}

func TestHangTimesOut(t *testing.T) {
	sc := stdioServer(t, "basic")
	sc.Timeout = 0.3
	m := newManager(t, map[string]ServerConfig{"local": sc}, Options{})
	m.Start(context.Background())
	content, isErr := run(t, m, "mcp__local__hang", `{}`)
	if !isErr || !strings.Contains(content, "did not answer within 300ms") {
		t.Fatalf("hang = %q (error %v), want a timeout error", content, isErr)
	}
	// The server is still usable.
	if content, isErr := run(t, m, "mcp__local__echo", `{"text":"ok"}`); isErr || content != "echo: ok" {
		t.Fatalf("call after the timeout = %q (error %v)", content, isErr)
	}
	if st := status(t, m, "local"); st.State != StateConnected {
		t.Errorf("status = %+v, want still connected", st)
	}
}

func TestCancelledCall(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"local": stdioServer(t, "basic")}, Options{})
	m.Start(context.Background())
	hang, _ := m.Lookup("mcp__local__hang")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		res := hang.Run(ctx, nil, json.RawMessage(`{}`))
		if !res.IsError || !strings.Contains(res.Content, "cancelled") {
			t.Errorf("cancelled call = %+v", res)
		}
	}()
	cancel()
	<-done
}

func TestMalformedServer(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"bad": stdioServer(t, "malformed")}, Options{})
	m.Start(context.Background())
	if st := status(t, m, "bad"); st.State != StateConnected {
		t.Fatalf("status = %+v", st)
	}
	names := toolNames(m.Tools())
	wantWeird := ToolName("bad", "weird.name/x")
	if !slices.Equal(names, []string{"mcp__bad__bad", wantWeird}) {
		t.Fatalf("tools = %v", names)
	}
	for _, tl := range m.Tools() {
		var schema map[string]any
		if err := json.Unmarshal(tl.Spec().Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s schema = %s, want an object schema", tl.Spec().Name, tl.Spec().Parameters)
		}
	}
	weird, _ := m.Lookup(wantWeird)
	if !strings.Contains(string(weird.Spec().Parameters), `"input"`) {
		t.Errorf("a string schema was not wrapped: %s", weird.Spec().Parameters)
	}
	content, isErr := run(t, m, "mcp__bad__bad", `{}`)
	if !isErr || !strings.Contains(content, `"bad" returned malformed data`) {
		t.Fatalf("malformed result = %q (error %v)", content, isErr)
	}
	if content, isErr := run(t, m, wantWeird, `{}`); !isErr || !strings.Contains(content, `"input" is missing`) {
		t.Errorf("wrapped tool without input = %q (error %v)", content, isErr)
	}
}

func TestServerFailsToStart(t *testing.T) {
	logs := t.TempDir()
	opts := Options{LogPath: func(s string) string { return filepath.Join(logs, s+".log") }}
	missing := ServerConfig{Command: filepath.Join(logs, "no-such-server")}
	m := newManager(t, map[string]ServerConfig{"dies": stdioServer(t, "fail"), "missing": missing}, opts)
	m.Start(context.Background())

	st := status(t, m, "dies")
	if st.State != StateFailed || !strings.Contains(st.Reason, "fatal: missing config file") || !strings.Contains(st.Reason, st.LogPath) {
		t.Errorf("status = %+v, want failed with the stderr line and the log path", st)
	}
	if st := status(t, m, "missing"); st.State != StateFailed || !strings.Contains(st.Reason, `"missing" could not be started`) {
		t.Errorf("status = %+v, want failed", st)
	}
	if p := m.Pending(); len(p) != 0 {
		t.Errorf("pending = %d tools from failed servers", len(p))
	}
	if err := m.Connect(context.Background(), "dies"); err == nil || !strings.Contains(err.Error(), "fatal: missing config file") {
		t.Errorf("Connect = %v", err)
	}
}

func TestDisabledServerNotStarted(t *testing.T) {
	sc := stdioServer(t, "basic")
	sc.Disabled = true
	m := newManager(t, map[string]ServerConfig{"off": sc}, Options{})
	m.Start(context.Background())
	if st := status(t, m, "off"); st.State != StateDisabled || st.Tools != 0 {
		t.Errorf("status = %+v, want disabled", st)
	}
	if err := m.Connect(context.Background(), "off"); err == nil {
		t.Error("Connect started a disabled server")
	}
	tools, err := Probe(context.Background(), "off", sc, Options{})
	if err != nil || len(tools) != 7 || tools[1].Name != "mcp__off__echo" {
		t.Errorf("Probe = %+v, %v", tools, err)
	}
}

// TestAWorkspaceServerCannotReadTheUsersSecrets is the regression test for
// a trusted workspace mcp.json that pulled the user's API key into its
// server with "env": {"X": "${OPENAI_API_KEY}"}: the server does not
// start and says why, while the user's own configuration may still do it.
func TestAWorkspaceServerCannotReadTheUsersSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-user-secret")
	t.Setenv("LANG", "C.UTF-8")
	sc := stdioServer(t, "basic")
	sc.Workspace = true
	sc.Env["X"] = "${OPENAI_API_KEY}"
	m := newManager(t, map[string]ServerConfig{"repo": sc}, Options{Dir: t.TempDir()})
	m.Start(context.Background())
	if _, ok := m.Lookup("mcp__repo__env"); ok {
		t.Fatal("the workspace's server started with the user's key")
	}
	if st := status(t, m, "repo"); !strings.Contains(st.Reason, "${OPENAI_API_KEY}") || !strings.Contains(st.Reason, "may not read") {
		t.Errorf("status = %+v, want the refused variable named", st)
	}
	// A variable commands see anyway still expands.
	sc.Env = map[string]string{serverEnv: "basic", "X": "${LANG}"}
	m2 := newManager(t, map[string]ServerConfig{"repo": sc}, Options{Dir: t.TempDir()})
	m2.Start(context.Background())
	if content, isErr := run(t, m2, "mcp__repo__env", `{}`); isErr || !strings.Contains(content, "X=C.UTF-8") {
		t.Errorf("a harmless variable: %q (error %v)", content, isErr)
	}
	// The user's own configuration may hand its server a secret.
	user := stdioServer(t, "basic")
	user.Env["X"] = "${OPENAI_API_KEY}"
	m3 := newManager(t, map[string]ServerConfig{"mine": user}, Options{})
	m3.Start(context.Background())
	if content, isErr := run(t, m3, "mcp__mine__env", `{}`); isErr || !strings.Contains(content, "X=sk-user-secret") {
		t.Errorf("the user's server: %q (error %v)", content, isErr)
	}
}
