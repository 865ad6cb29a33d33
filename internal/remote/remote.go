// Package remote lets a second Tally process ask the running one to run a
// command for it, over a Unix socket next to the store. The desktop app
// holds the store's exclusive lock; with this, `tally sessions`, `tally
// inspect` and the other reading commands still work while it is open: the
// app runs them against its own open store and streams their output back.
//
// The socket is created with mode 0600 in the data directory, so only the
// user who owns the data can connect. One request per connection: a JSON
// line {"args": [...]} from the client, then JSON lines {"o": text},
// {"e": text} with the command's standard output and error as it writes
// them, and a last line {"exit": code}.
package remote

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// SocketName is the socket's file name in the data directory.
const SocketName = "tally.sock"

// MaxRequest caps a request line in bytes.
const MaxRequest = 64 << 10

// Handler runs one command with args and returns its exit status.
type Handler func(args []string, stdout, stderr io.Writer) int

type request struct {
	Args []string `json:"args"`
}

type frame struct {
	Out  *string `json:"o,omitempty"`
	Err  *string `json:"e,omitempty"`
	Exit *int    `json:"exit,omitempty"`
}

// Serve listens on the socket of dataDir and runs each request with h, one
// at a time. It replaces a stale socket left by a process that died; stop
// closes the listener and removes the socket.
func Serve(dataDir string, h Handler) (stop func(), err error) {
	path := filepath.Join(dataDir, SocketName)
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("another Tally already serves %s; close it first", dataDir)
	}
	_ = os.Remove(path) // stale: nobody answers on it
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s (%v); command-line reads will wait for the app to close", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot restrict %s to its owner (%v)", path, err)
	}
	var one sync.Mutex // commands run one at a time, like separate processes would
	done := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(done)
				return
			}
			go func() {
				one.Lock()
				defer one.Unlock()
				serveConn(c, h)
			}()
		}
	}()
	return func() {
		ln.Close()
		<-done
		_ = os.Remove(path)
	}, nil
}

func serveConn(c net.Conn, h Handler) {
	defer c.Close()
	r := bufio.NewReader(io.LimitReader(c, MaxRequest))
	line, err := r.ReadBytes('\n')
	var req request
	if err != nil || json.Unmarshal(line, &req) != nil || len(req.Args) == 0 {
		return
	}
	w := &frameWriter{enc: json.NewEncoder(c)}
	code := func() (code int) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(w.stream(false), "tally: the running app failed on this command (%v); close the app and run it again\n", p)
				code = 1
			}
		}()
		return h(req.Args, w.stream(true), w.stream(false))
	}()
	w.mu.Lock()
	_ = w.enc.Encode(frame{Exit: &code})
	w.mu.Unlock()
}

// frameWriter turns writes to stdout and stderr into frames on one
// connection.
type frameWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

type streamWriter struct {
	fw  *frameWriter
	out bool
}

func (fw *frameWriter) stream(out bool) io.Writer { return streamWriter{fw, out} }

func (s streamWriter) Write(p []byte) (int, error) {
	text := string(p)
	f := frame{Err: &text}
	if s.out {
		f = frame{Out: &text}
	}
	s.fw.mu.Lock()
	defer s.fw.mu.Unlock()
	if err := s.fw.enc.Encode(f); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Serving reports whether a Tally answers on the socket of dataDir.
func Serving(dataDir string) bool {
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, SocketName), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ErrNoServer is returned by Call when no Tally serves the data directory.
var ErrNoServer = errors.New("no running Tally serves this data directory")

// Call asks the Tally serving dataDir to run args, copying its output to
// stdout and stderr, and returns the command's exit status. It returns an
// error matching ErrNoServer when nobody listens.
func Call(dataDir string, args []string, stdout, stderr io.Writer) (int, error) {
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, SocketName), 2*time.Second)
	if err != nil {
		return 0, fmt.Errorf("%w (%v)", ErrNoServer, err)
	}
	defer c.Close()
	b, _ := json.Marshal(request{Args: args})
	if _, err := c.Write(append(b, '\n')); err != nil {
		return 0, fmt.Errorf("%w (%v)", ErrNoServer, err)
	}
	dec := json.NewDecoder(bufio.NewReader(c))
	for {
		var f frame
		if err := dec.Decode(&f); err != nil {
			return 0, fmt.Errorf("the running Tally stopped answering (%v); try again, or close the app and run the command then", err)
		}
		switch {
		case f.Exit != nil:
			return *f.Exit, nil
		case f.Out != nil:
			if _, err := io.WriteString(stdout, *f.Out); err != nil {
				return 0, err
			}
		case f.Err != nil:
			_, _ = io.WriteString(stderr, *f.Err)
		}
	}
}
