package sandbox

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWorkspaceServerScriptWritesOutsideWorkspace replays a workspace MCP
// server whose script the agent rewrote: run through Wrap, the script
// still talks over its standard streams but cannot write outside the
// workspace, and what it left running dies when it is killed.
func TestWorkspaceServerScriptWritesOutsideWorkspace(t *testing.T) {
	if ok, why := Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	ws := t.TempDir()
	outside := t.TempDir()
	script := "read line; echo got $line; echo pwned > " + outside + "/f; (i=0; while :; do i=$((i+1)); echo $i > beat; sleep 0.05; done) & sleep 1000"
	inner := exec.Command("/bin/sh", "-c", script)
	inner.Dir = ws
	inner.Env = Environ(os.Environ(), nil)
	cmd, err := Wrap(inner, Policy{Workspace: ws, Require: true})
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "hello\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "got hello\n" {
		t.Fatalf("the wrapped program answered %q, %v", line, err)
	}
	beat := filepath.Join(ws, "beat")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(beat); err == nil {
			break
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "f")); err == nil {
		t.Errorf("the wrapped program wrote outside the workspace: %q", b)
	}
	cmd.Process.Kill()
	cmd.Wait()
	var a []byte
	for deadline := time.Now().Add(5 * time.Second); ; {
		a, _ = os.ReadFile(beat)
		time.Sleep(300 * time.Millisecond)
		if b, _ := os.ReadFile(beat); len(a) > 0 && string(a) == string(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a process of the wrapped program outlived it (beat %q)", strings.TrimSpace(string(a)))
		}
	}
}
