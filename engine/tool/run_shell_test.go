//go:build unix

package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunShell(t *testing.T) {
	ws, env := newWorkspace(t, map[string]string{"hello.txt": "hi from file\n"})
	cases := []struct {
		name    string
		args    map[string]any
		wantErr bool
		want    []string
	}{
		{"success", map[string]any{"command": "cat hello.txt"}, false, []string{"hi from file\nexit status 0"}},
		{"working directory is the workspace", map[string]any{"command": "pwd -P"}, false, []string{mustEval(t, ws) + "\n"}},
		{"non-zero exit status is an error", map[string]any{"command": "echo failing; exit 3"}, true, []string{"failing\nexit status 3"}},
		{"stdout and stderr are combined", map[string]any{"command": "echo out; echo err >&2"}, false, []string{"out\nerr\n"}},
		{"no output", map[string]any{"command": "true"}, false, []string{"(no output)\nexit status 0"}},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, false, []string{"done\nexit status 0"}},
		{"bash features", map[string]any{"command": "[[ 1 -eq 1 ]] && echo yes"}, false, []string{"yes"}},
		{"killed by a signal", map[string]any{"command": "kill -9 $$"}, true, []string{"killed by signal 9 (killed)", "exit status 137"}},
		{"missing command", map[string]any{"command": "  "}, true, []string{"command is missing"}},
		{"negative timeout", map[string]any{"command": "true", "timeout_seconds": -1}, true, []string{"timeout_seconds -1 is negative"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, RunShell(), env, tc.args)
			if res.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
			}
			mustContain(t, res.Content, tc.want...)
		})
	}

	t.Run("timeout kills the whole process group", func(t *testing.T) {
		start := time.Now()
		res := call(t, RunShell(), env, map[string]any{
			"command":         heartbeat("bg") + "sleep 30",
			"timeout_seconds": 2, // time for the heartbeat to start on a loaded machine
		})
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Fatalf("took %v", elapsed)
		}
		if !res.IsError {
			t.Error("a timed-out command is not an error")
		}
		mustContain(t, res.Content, "timed out after 2s", "exit status")
		if b, _ := os.ReadFile(filepath.Join(ws, "bg.beat")); len(b) == 0 {
			t.Fatal("the timeout fired before the background process beat once, so the test checked nothing")
		}
		waitHeartbeatStops(t, filepath.Join(ws, "bg.beat"))
	})
	t.Run("background process does not outlive a finished command", func(t *testing.T) {
		start := time.Now()
		res := call(t, RunShell(), env, map[string]any{"command": heartbeat("bg2") + "echo started"})
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Fatalf("took %v; the call waited for the background process", elapsed)
		}
		mustContain(t, res.Content, "started\nexit status 0")
		waitHeartbeatStops(t, filepath.Join(ws, "bg2.beat"))
	})
	t.Run("env timeout applies by default", func(t *testing.T) {
		e := *env
		e.ShellTimeout = 300 * time.Millisecond
		res := call(t, RunShell(), &e, map[string]any{"command": "sleep 30"})
		mustContain(t, res.Content, "timed out after 0.3s")
	})
	t.Run("context cancel kills the process group", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		beat := filepath.Join(ws, "bg3.beat")
		// Cancel once the background process has beaten, not after a fixed
		// delay: on a loaded machine the shell may not have started it yet.
		go func() {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if b, _ := os.ReadFile(beat); len(b) > 0 {
					break
				}
			}
			cancel()
		}()
		args, _ := json.Marshal(map[string]any{"command": heartbeat("bg3") + "sleep 30"})
		start := time.Now()
		res := RunShell().Run(ctx, env, args)
		if elapsed := time.Since(start); elapsed > 40*time.Second {
			t.Fatalf("took %v", elapsed)
		}
		if !res.IsError {
			t.Error("a cancelled command is not an error")
		}
		mustContain(t, res.Content, "cancelled")
		if b, _ := os.ReadFile(beat); len(b) == 0 {
			t.Fatal("the command was cancelled before the background process beat once, so the test checked nothing")
		}
		waitHeartbeatStops(t, beat)
	})
	t.Run("output is capped keeping head and tail", func(t *testing.T) {
		e := *env
		e.OutputLimit = 1000
		res := call(t, RunShell(), &e, map[string]any{"command": "echo FIRST; for i in $(seq 1 20000); do echo line $i; done; echo LAST"})
		mustContain(t, res.Content, "FIRST\n", "LAST\n", "omitted", "exit status 0")
		if len(res.Content) > 1000+300 {
			t.Errorf("output is %d bytes with a 1000-byte limit", len(res.Content))
		}
		m := envelopeRE.FindStringSubmatch(res.Content)
		if m == nil {
			t.Fatalf("no envelope:\n%s", res.Content)
		}
		total := 0
		for i := 1; i <= 20000; i++ {
			total += len(fmt.Sprintf("line %d\n", i))
		}
		total += len("FIRST\nLAST\n")
		if got := atoiCommas(t, m[1]); got != total {
			t.Errorf("envelope says %d bytes, want %d", got, total)
		}
	})
	t.Run("timeout is capped at ten minutes", func(t *testing.T) {
		res := call(t, RunShell(), env, map[string]any{"command": "true", "timeout_seconds": 1e9})
		if res.IsError {
			t.Errorf("got %q", res.Content)
		}
	})
}

func TestCapWriter(t *testing.T) {
	for _, size := range []int{0, 10, 99, 100, 101, 150, 199, 200, 201, 250, 1000, 5000} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			w := newCapWriter(100)
			s := strings.Repeat("ab€", size/5+1)[:size]
			for i := 0; i < len(s); i += 7 {
				w.Write([]byte(s[i:min(i+7, len(s))]))
			}
			got := w.String()
			if size <= 100 {
				if got != strings.ToValidUTF8(s, "\uFFFD") {
					t.Errorf("got %q", got)
				}
				return
			}
			m := envelopeRE.FindStringSubmatch(got)
			if m == nil {
				t.Fatalf("no envelope: %q", got)
			}
			if n := atoiCommas(t, m[1]); n != size {
				t.Errorf("total %d, want %d", n, size)
			}
			if len(got) > 100+200 {
				t.Errorf("%d bytes", len(got))
			}
		})
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// heartbeat is a shell fragment that starts a background process writing
// a counter to name.beat every 50 ms and waits for its first beat. Process
// IDs do not identify it: inside the sandbox's PID namespace they differ
// from the machine's.
func heartbeat(name string) string {
	return "(i=0; while :; do i=$((i+1)); echo $i > " + name + ".beat; sleep 0.05; done) & until [ -s " + name + ".beat ]; do sleep 0.01; done; "
}

// waitFileExists waits (boundedly) for path to appear.
func waitFileExists(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s was not written", path)
}

// waitHeartbeatStops fails the test unless the process beating into path
// stops soon: two reads 300 ms apart (six beats) see the same count.
func waitHeartbeatStops(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		a, _ := os.ReadFile(path)
		time.Sleep(300 * time.Millisecond)
		if b, _ := os.ReadFile(path); len(a) > 0 && string(a) == string(b) {
			return
		}
	}
	if b, _ := os.ReadFile(path); len(b) == 0 {
		t.Errorf("%s stayed empty, so whether its process survived is unknown", filepath.Base(path))
		return
	}
	t.Errorf("the background process writing %s survived", filepath.Base(path))
}
