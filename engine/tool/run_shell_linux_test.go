package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

// TestRunShellKillsSetsidChildren is the regression test for background
// processes that escaped the process group with setsid and outlived the
// call.
func TestRunShellKillsSetsidChildren(t *testing.T) {
	ws, env := newWorkspace(t, nil)
	res := call(t, RunShell(), env, map[string]any{
		"command": heartbeat("bg") + setsidHeartbeat("ss") + "echo started",
	})
	mustContain(t, res.Content, "started\n", "exit status 0")
	waitHeartbeatStops(t, filepath.Join(ws, "bg.beat"))
	waitHeartbeatStops(t, filepath.Join(ws, "ss.beat"))
}

// TestRunShellDiesWithTally is the regression test for commands that kept
// running after Tally was killed: a re-exec of the test binary acts as
// Tally, runs a command that starts a plain and a setsid'd background
// process, and is killed.
func TestRunShellDiesWithTally(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			ws := t.TempDir()
			req, _ := json.Marshal(fakeTallyCall{
				Workspace: ws,
				Command:   heartbeat("bg") + setsidHeartbeat("ss") + "sleep 1000",
			})
			tally := exec.Command(os.Args[0])
			tally.Env = append(os.Environ(), fakeTallyEnv+"="+string(req))
			if err := tally.Start(); err != nil {
				t.Fatal(err)
			}
			defer tally.Process.Kill()
			beats := []string{filepath.Join(ws, "bg.beat"), filepath.Join(ws, "ss.beat")}
			for _, b := range beats {
				waitFileExists(t, b)
			}
			tally.Process.Signal(sig)
			tally.Wait()
			for _, b := range beats {
				waitHeartbeatStops(t, b)
			}
		})
	}
}

// requireSandbox skips the test where the kernel cannot confine commands.
func requireSandbox(t *testing.T) {
	t.Helper()
	if ok, why := sandbox.Available(); !ok {
		t.Skipf("the sandbox is not available here: %s", why)
	}
}

// sandboxEnv returns a workspace and an Env with a session temp dir.
func sandboxEnv(t *testing.T) (string, *Env) {
	ws, env := newWorkspace(t, nil)
	env.TempDir = t.TempDir()
	return ws, env
}

// TestRunShellSandboxBlocksWritesOutside checks that a command cannot write
// outside the workspace, the session temp dir and the caches, and that the
// model is told why.
func TestRunShellSandboxBlocksWritesOutside(t *testing.T) {
	requireSandbox(t)
	ws, env := sandboxEnv(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	name := fmt.Sprintf("tally-sandbox-test-%d", os.Getpid())
	for _, target := range []string{
		filepath.Join(home, "."+name),
		filepath.Join(os.TempDir(), name),
		filepath.Join(filepath.Dir(ws), name),
	} {
		t.Cleanup(func() { os.Remove(target) })
	}
	for _, c := range []struct{ command, path string }{
		{"echo x > \"$HOME/." + name + "\"", filepath.Join(home, "."+name)},
		{"echo x > /tmp/" + name, filepath.Join("/tmp", name)},
		{"echo x > ../" + name, filepath.Join(filepath.Dir(ws), name)},
		{"touch ../" + name, filepath.Join(filepath.Dir(ws), name)},
	} {
		res := call(t, RunShell(), env, map[string]any{"command": c.command})
		if !res.IsError {
			t.Errorf("%s: not an error:\n%s", c.command, res.Content)
		}
		mustContain(t, res.Content, "Permission denied", blockedFileNote)
		if _, err := os.Stat(c.path); err == nil {
			t.Errorf("%s: %s was written", c.command, c.path)
		}
	}
}

func TestRunShellSandboxAllowsWorkspaceTempAndCaches(t *testing.T) {
	requireSandbox(t)
	ws, env := sandboxEnv(t)
	cache := filepath.Join(t.TempDir(), "cache") // created by the sandbox
	env.CacheDirs = []string{cache}
	res := call(t, RunShell(), env, map[string]any{"command": fmt.Sprintf(
		"mkdir -p a/b && echo ws > a/b/f && mv a/b/f a/g && echo tmp > \"$TMPDIR/t\" && echo c > %s/c && cat a/g \"$TMPDIR/t\" %s/c && cat /etc/hostname >/dev/null && echo done",
		cache, cache)})
	if res.IsError {
		t.Fatalf("got %s", res.Content)
	}
	mustContain(t, res.Content, "ws\ntmp\nc\ndone\n", "exit status 0")
	if readWS(t, ws, "a/g") != "ws\n" {
		t.Error("workspace file not written")
	}
	if strings.Contains(res.Content, "not sandboxed") {
		t.Errorf("unexpected note: %s", res.Content)
	}
}

// TestRunShellSandboxBlocksNetwork checks that TCP connections are refused
// unless the network is allowed.
func TestRunShellSandboxBlocksNetwork(t *testing.T) {
	requireSandbox(t)
	if !sandbox.BlocksNetwork() {
		t.Skip("this kernel's Landlock cannot restrict TCP (ABI 4, Linux 6.7, is needed)")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	command := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)

	_, env := sandboxEnv(t)
	res := call(t, RunShell(), env, map[string]any{"command": command})
	if !res.IsError || strings.Contains(res.Content, "connected") {
		t.Errorf("the connection was not blocked:\n%s", res.Content)
	}
	mustContain(t, res.Content, blockedNetNote)
	if strings.Contains(res.Content, blockedFileNote) {
		t.Errorf("a blocked connection is reported as a blocked write:\n%s", res.Content)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections", n)
	}

	env.AllowNetwork = true
	res = call(t, RunShell(), env, map[string]any{"command": command})
	if res.IsError {
		t.Errorf("with the network allowed: %s", res.Content)
	}
	mustContain(t, res.Content, "connected\n")
}

// TestRunShellSandboxCannotReadTallyEnviron checks that a command cannot
// read the API key from Tally's own initial environment through /proc.
func TestRunShellSandboxCannotReadTallyEnviron(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	req, _ := json.Marshal(fakeTallyCall{
		Workspace: ws,
		// Tally's process ID as a command may learn it; inside the
		// sandbox's PID namespace its /proc does not list Tally at all.
		Command: fmt.Sprintf("tally=%d; echo tally=$tally; tr '\\0' '\\n' < /proc/$tally/environ", os.Getpid()),
	})
	tally := exec.Command(os.Args[0])
	tally.Env = append(os.Environ(), fakeTallyEnv+"="+string(req), "OPENAI_API_KEY=sk-test-initial-env-42")
	out, err := tally.Output()
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(out), "tally=")
	if !strings.Contains(string(out), "Permission denied") && !strings.Contains(string(out), "No such file") {
		t.Errorf("output does not say the read failed:\n%s", out)
	}
	if strings.Contains(string(out), "sk-test-initial-env-42") {
		t.Errorf("the command read Tally's environment:\n%s", out)
	}
}

// TestRunShellSandboxGoTest checks that a Go toolchain works in the
// sandbox with its private caches, created on the first command.
func TestRunShellSandboxGoTest(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	ws, env := sandboxEnv(t)
	env.CacheRoot = filepath.Join(t.TempDir(), "not-yet")
	files := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.26\n",
		"m.go":      "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := call(t, RunShell(), env, map[string]any{"command": "go test -count=1 ./...", "timeout_seconds": 300})
	if res.IsError {
		t.Fatalf("go test failed in the sandbox:\n%s", res.Content)
	}
	mustContain(t, res.Content, "ok  \texample.com/m")
}

// setsidHeartbeat is like heartbeat, in a process that left the command's
// session with setsid.
func setsidHeartbeat(name string) string {
	return "setsid sh -c 'i=0; while :; do i=$((i+1)); echo $i > " + name + ".beat; sleep 0.05; done' & until [ -e " + name + ".beat ]; do sleep 0.01; done; "
}

// BenchmarkRunShell measures one short command through the sandbox helper
// (or directly where it is unavailable).
func BenchmarkRunShell(b *testing.B) {
	ws := b.TempDir()
	env := &Env{Workspace: ws, TempDir: b.TempDir()}
	args := []byte(`{"command":"true"}`)
	for b.Loop() {
		if res := RunShell().Run(context.Background(), env, args); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// Reading is allowed across the home directory, but not its credential
// stores nor the paths the session marks private (Tally's data directory,
// which holds every session and, without a keychain, the API key).
func TestRunShellSandboxHidesCredentialStores(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	files := map[string]string{
		".ssh/id_ed25519":              "SSH-PRIVATE",
		".aws/credentials":             "AWS-CREDS",
		".netrc":                       "NETRC-LINE",
		".local/share/tally/tally.db":  "TALLY-STORE",
		".local/share/other/notes.txt": "OTHER-OK",
		".profile":                     "PROFILE-OK",
	}
	plantFiles(t, home, files)
	_, env := sandboxEnv(t)
	env.Private = []string{filepath.Join(home, ".local/share/tally")}
	checkCatReadable(t, env, files)
}

// TestCommandPlantsCodeInUserBuildCaches replays a full-auto command that
// edits a module in the user's Go module cache and writes the user's build
// cache, so that the user's next build outside Tally runs its payload.
func TestCommandPlantsCodeInUserBuildCaches(t *testing.T) {
	requireSandbox(t)
	user := t.TempDir()
	mod := filepath.Join(user, "mod", "example.com", "dep@v1.0.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "dep.go"), []byte("package dep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gocache := filepath.Join(user, "go-build")
	os.MkdirAll(gocache, 0o755)
	t.Setenv("GOMODCACHE", filepath.Join(user, "mod"))
	t.Setenv("GOCACHE", gocache)
	ws, env := sandboxEnv(t)
	env.CacheRoot = filepath.Join(t.TempDir(), "private")
	for _, network := range []bool{false, true} {
		env.AllowNetwork = network
		res := call(t, RunShell(), env, map[string]any{"command": fmt.Sprintf(
			"echo 'func init() { panic(1) }' >> %s/dep.go; echo x > %s/planted; echo x > \"$GOCACHE/ok\" && echo GOCACHE=$GOCACHE", mod, gocache)})
		if b, _ := os.ReadFile(filepath.Join(mod, "dep.go")); string(b) != "package dep\n" {
			t.Errorf("network %v: the module in the user's cache was edited: %q", network, b)
		}
		if _, err := os.Stat(filepath.Join(gocache, "planted")); err == nil {
			t.Errorf("network %v: the user's build cache was written", network)
		}
		mustContain(t, res.Content, "GOCACHE="+env.CacheRoot)
	}
	_ = ws
}

// TestRunShellSandboxWritesInAdditionalRoots checks that a command may
// write in the session's additional folders, and still not beside them.
func TestRunShellSandboxWritesInAdditionalRoots(t *testing.T) {
	requireSandbox(t)
	_, env := sandboxEnv(t)
	extra := newRoot(t, map[string]string{"a.txt": "a\n"})
	beside := filepath.Join(filepath.Dir(extra), fmt.Sprintf("tally-beside-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(beside) })
	env.Roots = []string{extra}
	res := call(t, RunShell(), env, map[string]any{"command": fmt.Sprintf("echo b > %s/b.txt && cat %s/a.txt %s/b.txt", extra, extra, extra)})
	if res.IsError {
		t.Fatalf("got %s", res.Content)
	}
	mustContain(t, res.Content, "a\nb\n")
	res = call(t, RunShell(), env, map[string]any{"command": "echo x > " + beside})
	if !res.IsError {
		t.Errorf("a write beside the additional folder ran: %s", res.Content)
	}
	if _, err := os.Stat(beside); err == nil {
		t.Errorf("%s was written", beside)
	}
	if note := ShellSandboxNote(env); !strings.Contains(note, "1 additional folder") {
		t.Errorf("the sandbox note does not name the additional folder: %s", note)
	}
	// A folder deleted meanwhile is not made again by the next command.
	if err := os.RemoveAll(extra); err != nil {
		t.Fatal(err)
	}
	call(t, RunShell(), env, map[string]any{"command": "true"})
	if _, err := os.Stat(extra); err == nil {
		t.Errorf("running a command made the deleted folder %s again", extra)
	}
}
