package remote

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveCounting serves dir with a handler that counts its runs and
// prints "secret".
func serveCounting(t *testing.T, dir string) (runs *int, stop func()) {
	t.Helper()
	n := 0
	stop, err := Serve(dir, func(_ Request, _ io.Reader, stdout, _ io.Writer) int {
		n++
		io.WriteString(stdout, "secret: every session\n")
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &n, stop
}

// rawRequest sends line on a fresh connection and returns all it got.
func rawRequest(t *testing.T, dir, line string) string {
	t.Helper()
	c, err := net.Dial("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, line+"\n")
	b, _ := io.ReadAll(c)
	return string(b)
}

// A leftover process read every session through the app's socket: any
// client of the socket was served. A client must now send the app's
// per-launch token (kept 0600 in the data directory, out of the sandbox's
// reach) and, where the kernel tells, be the same user.
func TestSocketClientWithoutTokenIsRefused(t *testing.T) {
	dir := t.TempDir()
	runs, _ := serveCounting(t, dir)
	fi, err := os.Stat(filepath.Join(dir, TokenName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v, %v; want mode 0600", fi, err)
	}
	for name, line := range map[string]string{
		"no token":    `{"args":["export","s1"]}`,
		"wrong token": `{"token":"00ff","args":["export","s1"]}`,
	} {
		got := rawRequest(t, dir, line)
		if strings.Contains(got, "secret") || !strings.Contains(got, "token") {
			t.Errorf("%s: got %q", name, got)
		}
	}
	if *runs != 0 {
		t.Fatalf("%d commands ran for unauthenticated clients", *runs)
	}
	// With the token the command runs.
	var out bytes.Buffer
	if code, err := Call(dir, Request{Args: []string{"sessions"}}, nil, &out, io.Discard); err != nil || code != 0 || !strings.Contains(out.String(), "secret") {
		t.Fatalf("the app's own client: code %d, %v, %q", code, err, out.String())
	}
	// Another user (as the kernel reports it) is refused even with the
	// token.
	ownerUID = func() int { return os.Getuid() + 1 }
	defer func() { ownerUID = os.Getuid }()
	out.Reset()
	var errb bytes.Buffer
	code, err := Call(dir, Request{Args: []string{"sessions"}}, nil, &out, &errb)
	if peerOK() && (code == 0 || strings.Contains(out.String(), "secret") || !strings.Contains(errb.String(), "only the user")) {
		t.Errorf("another user: code %d, %v, out %q, stderr %q", code, err, out.String(), errb.String())
	}
}

// One idle client held the lock every request took first: every other
// command line read waited forever. Clients are served at once, each
// with a deadline for its request.
func TestIdleSocketClientDoesNotBlockOthers(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	stop, err := Serve(dir, func(req Request, _ io.Reader, stdout, stderr io.Writer) int {
		args := req.Args
		if args[0] == "slow" {
			<-release // a long command
		}
		io.WriteString(stdout, "ok\n")
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	defer close(release)
	idle, err := net.Dial("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	go Call(dir, Request{Args: []string{"slow"}}, nil, io.Discard, io.Discard)
	time.Sleep(100 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		_, err := Call(dir, Request{Args: []string{"sessions"}}, nil, &out, io.Discard)
		if err == nil && out.String() != "ok\n" {
			err = io.ErrUnexpectedEOF
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("an idle client and a long command blocked every other read")
	}
	// The idle client is dropped after RequestTimeout.
	_ = idle.SetReadDeadline(time.Now().Add(RequestTimeout + 5*time.Second))
	start := time.Now()
	if _, err := bufio.NewReader(idle).ReadByte(); err == nil || time.Since(start) > RequestTimeout+3*time.Second {
		t.Errorf("the idle client was kept %v (%v)", time.Since(start), err)
	}
}

// peerOK reports whether peer credentials can be read here.
func peerOK() bool {
	dir, err := os.MkdirTemp("", "peer")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		return false
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("unix", filepath.Join(dir, "s")); err == nil {
			time.Sleep(100 * time.Millisecond)
			c.Close()
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		return false
	}
	defer c.Close()
	_, ok := peerUID(c)
	return ok
}
