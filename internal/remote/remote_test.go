package remote

import (
	"bufio"
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
	stop, err := Serve(dir, func(req Request, _ io.Reader, stdout, stderr io.Writer) int {
		args := req.Args
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
	code, err := Call(dir, Request{Args: []string{"sessions", "--json"}}, nil, &out, &errb)
	if err != nil || code != 3 || out.String() != "out: sessions --json\n" || errb.String() != "a warning\n" {
		t.Errorf("code %d, err %v, out %q, stderr %q", code, err, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code, err := Call(dir, Request{Args: []string{"boom"}}, nil, &out, &errb); err != nil || code != 1 || !strings.Contains(errb.String(), "failed on this command") {
		t.Errorf("a panicking command: code %d, err %v, stderr %q", code, err, errb.String())
	}
	if _, err := Serve(dir, nil); err == nil {
		t.Error("a second server on the same data took over")
	}
}

func TestCallWithoutServerAndStaleSocket(t *testing.T) {
	dir := t.TempDir()
	if _, err := Call(dir, Request{Args: []string{"sessions"}}, nil, io.Discard, io.Discard); !errors.Is(err, ErrNoServer) {
		t.Errorf("no server: %v", err)
	}
	// A socket file left by a process that died is replaced.
	if err := os.WriteFile(filepath.Join(dir, SocketName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stop, err := Serve(dir, func(Request, io.Reader, io.Writer, io.Writer) int { return 0 })
	if err != nil {
		t.Fatalf("a stale socket blocked the server: %v", err)
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, SocketName)); !os.IsNotExist(err) {
		t.Error("stop left the socket behind")
	}
}

// `tally acp` ran only where the store could be opened: a command had no
// standard input, folder or environment of its client. A command now gets
// the client's folder and environment, and its standard input when the
// client sends it, while its output streams back.
func TestCallCarriesFolderEnvironmentAndInput(t *testing.T) {
	dir := t.TempDir()
	stop, err := Serve(dir, func(req Request, stdin io.Reader, stdout, stderr io.Writer) int {
		fmt.Fprintf(stdout, "dir %s env %s\n", req.Dir, strings.Join(req.Env, ","))
		sc := bufio.NewScanner(stdin)
		for sc.Scan() { // an echo: each line answered before the next is read
			fmt.Fprintf(stdout, "got %s\n", sc.Text())
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		code, err := Call(dir, Request{Args: []string{"acp"}, Dir: "/work", Env: []string{"A=1"}}, inR, outW, io.Discard)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d", code)
		}
		outW.Close()
		done <- err
	}()
	lines := bufio.NewScanner(outR)
	next := func() string {
		if !lines.Scan() {
			t.Fatal("the output ended early")
		}
		return lines.Text()
	}
	if got := next(); got != "dir /work env A=1" {
		t.Errorf("the command saw %q", got)
	}
	for _, in := range []string{"one", "two"} {
		io.WriteString(inW, in+"\n")
		if got := next(); got != "got "+in {
			t.Errorf("after %q the command wrote %q", in, got)
		}
	}
	inW.Close() // the input ends, and so does the command
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Without an input the command reads none.
	var out bytes.Buffer
	if code, err := Call(dir, Request{Args: []string{"sessions"}}, nil, &out, io.Discard); err != nil || code != 0 || strings.Contains(out.String(), "got") {
		t.Errorf("no input: code %d, %v, %q", code, err, out.String())
	}
}

// A write that ended inside a character reached the client as two U+FFFD
// (each frame is JSON text): the cut character now arrives whole.
func TestOutputKeepsCharactersWhole(t *testing.T) {
	dir := t.TempDir()
	text := "größer — 😀"
	stop, err := Serve(dir, func(_ Request, _ io.Reader, stdout, _ io.Writer) int {
		b := []byte(text)
		for i := range b {
			stdout.Write(b[i : i+1])
		}
		stdout.Write([]byte{0xf0, 0x9f}) // cut short by the end of the command
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var out bytes.Buffer
	// The last bytes are sent as they are, when the command ends.
	if _, err := Call(dir, Request{Args: []string{"x"}}, nil, &out, io.Discard); err != nil || out.String() != text+"\uFFFD\uFFFD" {
		t.Errorf("got %q, %v; want %q and the two bytes left", out.String(), err, text)
	}
}
