package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// command. The processes are found by a unique sleep time in the machine's
// /proc, since inside the sandbox's PID namespace their numbers differ.
func TestStartKillsEscapedChildren(t *testing.T) {
	ws := t.TempDir()
	nap := uniqueNap()
	run(t, ws, "sleep "+nap+" & setsid sleep "+nap+" & (setsid sh -c 'sleep "+nap+" & touch double' &); until [ -e double ]; do sleep 0.01; done", Policy{})
	waitNoProcess(t, nap)
}

func TestStopKillsTheTree(t *testing.T) {
	ws := t.TempDir()
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	nap := uniqueNap()
	c, err := Start(Spec{Shell: "/bin/bash", Command: "setsid sleep " + nap + " & touch started; sleep " + nap, Dir: ws, Env: os.Environ(), Output: pw, Policy: Policy{Workspace: ws}})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(ws, "started"))
	c.Stop()
	select {
	case <-c.Done():
	default:
		t.Fatal("Stop returned before the command ended")
	}
	if code, _ := c.ExitStatus(); code != 137 {
		t.Errorf("exit status %d, want 137", code)
	}
	waitNoProcess(t, nap)
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

// uniqueNap returns a sleep duration no other test uses, so the sleeping
// processes can be told apart in /proc.
func uniqueNap() string {
	return fmt.Sprintf("%d.%06d", 900+os.Getpid()%100, time.Now().Nanosecond()/1000)
}

// processesRunning returns the machine's processes whose command line
// contains arg as a whole argument (zombies left out).
func processesRunning(arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			continue
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// waitNoProcess fails the test unless every process with arg on its
// command line is gone soon.
func waitNoProcess(t *testing.T, arg string) {
	t.Helper()
	var left []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = processesRunning(arg); len(left) == 0 {
			return
		}
	}
	for _, p := range left {
		syscall.Kill(p, syscall.SIGKILL)
	}
	t.Errorf("processes %v survived", left)
}

// waitFile waits (boundedly) for a command to create path.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s was not created", path)
}
