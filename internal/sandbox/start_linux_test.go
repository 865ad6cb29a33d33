package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	RunHelperIfRequested()
	os.Exit(m.Run())
}

// run starts command in a fresh workspace and returns its output and exit
// status once it ended.
func run(t *testing.T, ws, command string, p Policy) (out string, code int, note string, c *Cmd) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.Workspace = ws
	c, err = Start(Spec{Shell: "/bin/bash", Command: command, Dir: ws, Env: Environ(os.Environ(), nil), Output: pw, Policy: p})
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	<-c.Done()
	c.Stop()
	// Without the helper an escaped process may still hold the pipe.
	pr.SetReadDeadline(time.Now().Add(time.Second))
	b, _ := io.ReadAll(pr)
	pr.Close()
	code, note = c.ExitStatus()
	return string(b), code, note, c
}

func TestStartReportsExitStatus(t *testing.T) {
	ws := t.TempDir()
	out, code, note, c := run(t, ws, "echo hello; exit 3", Policy{})
	if out != "hello\n" || code != 3 || note != "" {
		t.Errorf("got %q, %d, %q", out, code, note)
	}
	if ok, why := Available(); ok {
		if sb, why := c.Sandboxed(); !sb {
			t.Errorf("not sandboxed although available: %s", why)
		}
	} else if sb, _ := c.Sandboxed(); sb {
		t.Errorf("sandboxed although unavailable (%s)", why)
	}
	_, code, note, _ = run(t, ws, "kill -9 $$", Policy{})
	if code != 137 || note != "killed by signal 9 (killed)" {
		t.Errorf("killed shell: %d, %q", code, note)
	}
}

// TestStartKillsEscapedChildren is the regression test for background
// processes, including ones in their own session, that outlived the
// command.
func TestStartKillsEscapedChildren(t *testing.T) {
	ws := t.TempDir()
	run(t, ws, "sleep 1000 & echo $! > bg.pid; setsid sleep 1000 & echo $! > setsid.pid; (setsid sh -c 'sleep 1000 & echo $! > double.pid' &); until [ -s double.pid ]; do sleep 0.01; done", Policy{})
	for _, f := range []string{"bg.pid", "setsid.pid", "double.pid"} {
		waitGone(t, readPID(t, filepath.Join(ws, f)))
	}
}

func TestStopKillsTheTree(t *testing.T) {
	ws := t.TempDir()
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	c, err := Start(Spec{Shell: "/bin/bash", Command: "setsid sleep 1000 & echo $! > s.pid; sleep 1000", Dir: ws, Env: os.Environ(), Output: pw, Policy: Policy{Workspace: ws}})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid := waitPIDFile(t, filepath.Join(ws, "s.pid"))
	c.Stop()
	select {
	case <-c.Done():
	default:
		t.Fatal("Stop returned before the command ended")
	}
	if code, _ := c.ExitStatus(); code != 137 {
		t.Errorf("exit status %d, want 137", code)
	}
	waitGone(t, pid)
}

func TestRequireRefusesWithoutSandbox(t *testing.T) {
	if ok, _ := Available(); ok {
		helperInstalled.Store(false)
		defer helperInstalled.Store(true)
	}
	_, pw, _ := os.Pipe()
	defer pw.Close()
	ws := t.TempDir()
	_, err := Start(Spec{Shell: "/bin/bash", Command: "touch ran", Dir: ws, Output: pw, Policy: Policy{Workspace: ws, Require: true}})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Why == "" {
		t.Fatalf("err = %v, want an UnavailableError", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the command ran")
	}
}

func TestHelperByHandIsRefused(t *testing.T) {
	cmd := exec.Command(os.Args[0], helperArg, "{}")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != helperExitUsage || !strings.Contains(string(out), "internal to run_shell") {
		t.Errorf("err = %v, output %q", err, out)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid not recorded: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("bad pid %q", b)
	}
	return pid
}

// waitPIDFile waits (boundedly) for a command to write its pid file.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return readPID(t, path)
		}
	}
	t.Fatalf("%s was not written", path)
	return 0
}

// waitGone fails the test unless pid exits (or is only a zombie) soon.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				return
			}
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d survived", pid)
}
