package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDescendants(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "sleep 1000 & echo $! > bg.pid; setsid sleep 1000 & echo $! > setsid.pid; exec sleep 1000")
	cmd.Dir = dir
	StartInGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		KillGroup(cmd)
		cmd.Wait()
	}()
	var want []int
	for _, f := range []string{"bg.pid", "setsid.pid"} {
		want = append(want, waitPID(t, filepath.Join(dir, f)))
	}
	defer func() {
		for _, p := range want {
			if p, err := os.FindProcess(p); err == nil {
				p.Kill()
			}
		}
	}()
	got, err := Descendants(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(want, cmd.Process.Pid) {
		if !slices.Contains(got, p) {
			t.Errorf("Descendants = %v, missing %d", got, p)
		}
	}
	if slices.Contains(got, os.Getpid()) {
		t.Error("Descendants lists the process itself")
	}
	if got, _ := Descendants(want[0]); len(got) != 0 {
		t.Errorf("a sleep has descendants %v", got)
	}
}

func TestReadStat(t *testing.T) {
	ppid, state, ok := readStat(os.Getpid())
	if !ok || ppid != os.Getppid() || state == 0 {
		t.Errorf("readStat = %d, %q, %v", ppid, state, ok)
	}
	if _, _, ok := readStat(-1); ok {
		t.Error("readStat of a missing process succeeded")
	}
}

func waitPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("%s was not written", path)
	return 0
}
