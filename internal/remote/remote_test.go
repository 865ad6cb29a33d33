package remote

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCallRunsTheCommandInTheServingProcess(t *testing.T) {
	dir := t.TempDir()
	stop, err := Serve(dir, func(args []string, stdout, stderr io.Writer) int {
		fmt.Fprintln(stdout, "out:", strings.Join(args, " "))
		fmt.Fprintln(stderr, "a warning")
		if args[0] == "boom" {
			panic("bad")
		}
		return 3
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	fi, err := os.Stat(filepath.Join(dir, SocketName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v; want mode 0600", fi, err)
	}
	var out, errb bytes.Buffer
	code, err := Call(dir, []string{"sessions", "--json"}, &out, &errb)
	if err != nil || code != 3 || out.String() != "out: sessions --json\n" || errb.String() != "a warning\n" {
		t.Errorf("code %d, err %v, out %q, stderr %q", code, err, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code, err := Call(dir, []string{"boom"}, &out, &errb); err != nil || code != 1 || !strings.Contains(errb.String(), "failed on this command") {
		t.Errorf("a panicking command: code %d, err %v, stderr %q", code, err, errb.String())
	}
	if _, err := Serve(dir, nil); err == nil {
		t.Error("a second server on the same data took over")
	}
}

func TestCallWithoutServerAndStaleSocket(t *testing.T) {
	dir := t.TempDir()
	if _, err := Call(dir, []string{"sessions"}, io.Discard, io.Discard); !errors.Is(err, ErrNoServer) {
		t.Errorf("no server: %v", err)
	}
	// A socket file left by a process that died is replaced.
	if err := os.WriteFile(filepath.Join(dir, SocketName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stop, err := Serve(dir, func([]string, io.Writer, io.Writer) int { return 0 })
	if err != nil {
		t.Fatalf("a stale socket blocked the server: %v", err)
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, SocketName)); !os.IsNotExist(err) {
		t.Error("stop left the socket behind")
	}
}
