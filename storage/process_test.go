package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests in this file run the test binary again as a child process, with
// helperEnv naming what the child should do and pathEnv the database.
const (
	helperEnv = "TALLY_STORAGE_TEST_HELPER"
	pathEnv   = "TALLY_STORAGE_TEST_PATH"
)

// TestHelperProcess is not a test: it is the body of the child processes
// started by the other tests in this file. It does nothing when run normally.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(pathEnv)
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "open":
		start := time.Now()
		s, err := Open(path, Options{})
		elapsed := time.Since(start)
		if err == nil {
			s.Close()
		}
		fmt.Printf("locked=%t elapsed=%d err=%v\n", errors.Is(err, ErrLocked), elapsed, err)
	case "append":
		s, err := Open(path, Options{})
		if err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(1)
		}
		if err := s.PutSession(Session{ID: "crash", Cycle: 1}); err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(1)
		}
		deadline := time.Now().Add(time.Minute)
		for i := 0; time.Now().Before(deadline); i++ {
			seq, err := s.Append("crash", 1, crashPayload(i))
			if err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(1)
			}
			// Reported only after Update has returned, i.e. committed.
			fmt.Printf("committed %d %d\n", i, seq)
		}
	default:
		fmt.Printf("unknown helper %q\n", os.Getenv(helperEnv))
	}
	os.Exit(0)
}

func crashPayload(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("message %08d;", i)), 64)
}

func helperCommand(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, pathEnv+"="+path)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestOpenLockedOtherProcess(t *testing.T) {
	s := openTest(t)
	cmd := helperCommand(t, "open", s.Path())
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child took %v overall: %s", time.Since(start), out)
	var locked bool
	var elapsed time.Duration
	if _, err := fmt.Sscanf(string(out), "locked=%t elapsed=%d", &locked, &elapsed); err != nil {
		t.Fatalf("cannot parse child output %q: %v", out, err)
	}
	if !locked {
		t.Errorf("child's Open did not fail with ErrLocked: %s", out)
	}
	if elapsed > 5*time.Second {
		t.Errorf("child's Open took %v", elapsed)
	}
	if !strings.Contains(string(out), "--data") {
		t.Errorf("child's error does not suggest --data: %s", out)
	}
}

// TestKillDurability kills a process that is appending with SIGKILL and
// checks that every append it saw committed is in the file.
func TestKillDurability(t *testing.T) {
	s := openTest(t)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := helperCommand(t, "append", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	committed := map[uint64]int{}
	var lastSeq uint64
	sc := bufio.NewScanner(stdout)
	killed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "committed" {
			t.Errorf("child: %s", sc.Text())
			continue
		}
		i, err1 := strconv.Atoi(f[1])
		seq, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad line from child: %q", sc.Text())
		}
		if seq <= lastSeq {
			t.Errorf("child reported seq %d after %d", seq, lastSeq)
		}
		lastSeq = seq
		committed[seq] = i
		if len(committed) == 200 && !killed {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited before it was killed: %v", err)
	}
	t.Logf("child killed after reporting %d commits (%v)", len(committed), err)

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	recs, err := s.Log("crash", 1)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[uint64][]byte{}
	for _, r := range recs {
		stored[r.Seq] = r.Data
	}
	for seq, i := range committed {
		data, ok := stored[seq]
		if !ok {
			t.Errorf("committed seq %d (message %d) is missing", seq, i)
		} else if !bytes.Equal(data, crashPayload(i)) {
			t.Errorf("seq %d holds %.30q, want message %d", seq, data, i)
		}
	}
	if len(recs) < len(committed) || len(recs) > len(committed)+1 {
		t.Errorf("log holds %d messages, child reported %d commits", len(recs), len(committed))
	}
}
