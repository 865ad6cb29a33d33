package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Run from a script with standard input from /dev/null (a character
// device, not a terminal), `tally run` showed the whole approval question
// for every call and read no answer. Without a terminal it now says once
// that the calls that need approval are denied, and how to allow them.
func TestRunWithoutATerminalSaysOnceThatApprovalsAreDenied(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, stdin := range map[string]io.Reader{"/dev/null": null, "a pipe": strings.NewReader("y\ny\n")} {
		ws := workspace(t)
		calc, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go"))
		var out, errb bytes.Buffer
		// "turn one" edits calc/calc.go and writes NOTES.md: two calls
		// that ask in the ask mode.
		code := Main([]string{"run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
			"--workspace", ws, "--mode", "ask", "turn one"}, stdin, &out, &errb)
		got := errb.String()
		if code != ExitDenied {
			t.Fatalf("%s: exit %d, want %d (denied): %s", name, code, ExitDenied, got)
		}
		if n := strings.Count(got, "not a terminal"); n != 1 || !strings.Contains(got, "--yes") {
			t.Errorf("%s: the notice shows %d times (want once, naming --yes):\n%s", name, n, got)
		}
		if strings.Contains(got, "[y]es") || strings.Contains(got, "Approve this call") {
			t.Errorf("%s: the approval question was printed with nobody to answer it:\n%s", name, got)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go")); string(b) != string(calc) {
			t.Errorf("%s: a call that needed approval changed calc/calc.go", name)
		}
		if _, err := os.Stat(filepath.Join(ws, "NOTES.md")); err == nil {
			t.Errorf("%s: a call that needed approval wrote NOTES.md", name)
		}
	}
}

// A `tally run` whose first request failed (a wrong key, a server error,
// no server) left an empty session behind each time. A session the run
// created itself and the model never answered is removed again, and the
// run says so; a session that got answers is never removed.
func TestFailedFirstRunRemovesTheSessionItCreated(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("Hello.") }), llmtest.WithAPIKey("sk-right"))
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	run := func(key string, args ...string) (string, int) {
		t.Helper()
		t.Setenv("OPENAI_API_KEY", key)
		_, errOut, code := runCLI(t, append([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", ws}, args...)...)
		return errOut, code
	}
	sessions := func() string {
		t.Helper()
		out, errOut, code := runCLI(t, "sessions", "--data", data)
		if code != 0 {
			t.Fatalf("tally sessions exited %d: %s", code, errOut)
		}
		return out
	}

	// A new session, refused by the server.
	errOut, code := run("sk-wrong", "hello")
	if code != ExitFail || !strings.Contains(errOut, "got no answer, so it was removed again") {
		t.Errorf("a refused first run: exit %d, stderr %q", code, errOut)
	}
	if got := sessions(); got != "" {
		t.Errorf("a refused first run left a session behind:\n%s", got)
	}
	// A new session under --session: its ID is shown, and it goes too.
	errOut, code = run("sk-wrong", "--session", "fresh", "hello")
	if code != ExitFail || !strings.Contains(errOut, "session fresh\n") || !strings.Contains(errOut, "The new session fresh got no answer, so it was removed again.") {
		t.Errorf("a refused first run with --session: exit %d, stderr %q", code, errOut)
	}
	if got := sessions(); got != "" {
		t.Errorf("a refused first run with --session left a session behind:\n%s", got)
	}
	// A session that got answers stays when a later run fails, and an
	// existing session's ID is not announced again.
	if errOut, code := run("sk-right", "--session", "kept", "hello"); code != 0 || !strings.Contains(errOut, "session kept\n") {
		t.Fatalf("a good first run with --session: exit %d, stderr %q", code, errOut)
	}
	errOut, code = run("sk-wrong", "--session", "kept", "again")
	if code != ExitFail || strings.Contains(errOut, "removed") || strings.Contains(errOut, "session kept\n") {
		t.Errorf("a refused later run: exit %d, stderr %q", code, errOut)
	}
	if got := sessions(); !strings.HasPrefix(got, "kept\t") {
		t.Errorf("a refused later run removed its session: %q", got)
	}
}

// A session that cannot be made under --session (here its workspace does
// not exist) is an error, never a run on no session.
func TestRunUnderANewSessionIDThatCannotBeCreatedFails(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("Hello.")))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data := t.TempDir()
	missing := filepath.Join(t.TempDir(), "gone")
	_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", missing, "--session", "fresh", "hello")
	if code != ExitFail || errOut == "" || strings.Contains(errOut, "session fresh\n") {
		t.Errorf("run under a session that cannot be made: exit %d, stderr %q", code, errOut)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d request(s) reached the model without a session", n)
	}
}

// TestRunSwitchesTheNetworkAndEveryCommandCardSaysSo is the regression
// test for headless runs that could not switch a session's network on (an
// attack had to build a helper for it): --network on is stored with the
// session, and inspect shows it.
func TestRunSwitchesTheNetworkAndEveryCommandCardSaysSo(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), workspace(t)
	for _, c := range []struct{ flag, want string }{{"on", "network allowed"}, {"off", "network"}} {
		var out, errb bytes.Buffer
		code := Main([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat",
			"--workspace", ws, "--session", "net", "--network", c.flag, "--yes", "turn one"}, strings.NewReader(""), &out, &errb)
		if code != 0 || !strings.Contains(errb.String(), "network "+c.flag) {
			t.Fatalf("--network %s: exit %d: %s", c.flag, code, errb.String())
		}
		var rep bytes.Buffer
		if code := Main([]string{"inspect", "--data", data, "--json", "net"}, strings.NewReader(""), &rep, &errb); code != 0 {
			t.Fatalf("inspect: exit %d: %s", code, errb.String())
		}
		on := strings.Contains(rep.String(), "network allowed")
		if on != (c.flag == "on") {
			t.Errorf("--network %s: inspect says %s", c.flag, rep.String())
		}
	}
	if code := Main([]string{"run", "--network", "maybe", "x"}, strings.NewReader(""), io.Discard, io.Discard); code != 2 {
		t.Errorf("--network maybe: exit %d, want 2", code)
	}
}
