// Package remote lets a second Tally process ask the running one to run a
// command for it, over a Unix socket next to the store. The desktop app
// holds the store's exclusive lock; with this, `tally sessions`, `tally
// inspect` and the other reading commands still work while it is open: the
// app runs them against its own open store and streams their output back.
// A command that reads its standard input (`tally acp`) gets the client's
// after the request, so a whole protocol session runs in the app.
//
// The socket is created with mode 0600 in the data directory, and every
// client must prove it is the user who runs the app twice over: on Linux
// the kernel's SO_PEERCRED must name the same user ID, and the request must
// carry the per-launch token Serve writes, mode 0600, to TokenName in the
// data directory — which the command sandbox cannot read, so a command the
// agent runs cannot talk to the app even as the same user. One request per
// connection: a JSON line {"token": …, "args": [...], "dir": …, "env":
// [...], "stdin": bool} from the client — its arguments, current folder
// and environment — then, when "stdin" is set, the client's standard input
// as raw bytes until it closes its side for writing; from the server JSON
// lines {"o": text}, {"e": text} with the command's standard output and
// error as it writes them (never splitting a UTF-8 character), and a last
// line {"exit": code}. Clients are served concurrently, each with
// deadlines on the request, so an idle or stalled client holds up nobody
// else.
package remote

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// SocketName is the socket's file name in the data directory.
const SocketName = "tally.sock"

// TokenName is the file, next to the socket, holding the serving app's
// per-launch token.
const TokenName = "tally.sock.token"

// MaxRequest caps a request line in bytes (the environment included).
const MaxRequest = 1 << 20

// RequestTimeout is how long a client has, once connected, to send its
// request line; WriteTimeout is how long one frame of output may wait for
// a client that stopped reading. Either ends that connection only.
const (
	RequestTimeout = 5 * time.Second
	WriteTimeout   = 30 * time.Second
)

// ownerUID is the user ID a client's peer credentials must show; a
// variable so tests can play another user.
var ownerUID = os.Getuid

// Request is a command another process asks the serving one to run.
type Request struct {
	// Args are the command's arguments, without the program name.
	Args []string
	// Dir is the client's current folder, which relative paths and a
	// missing --workspace mean; "" when it could not be read.
	Dir string
	// Env is the client's environment, as os.Environ gives it.
	Env []string
}

// Handler runs one command and returns its exit status. stdin is the
// client's standard input when it sent it (see Call), and empty otherwise.
type Handler func(req Request, stdin io.Reader, stdout, stderr io.Writer) int

type request struct {
	Token string   `json:"token"` // first: checked before anything else
	Args  []string `json:"args"`
	Dir   string   `json:"dir,omitempty"`
	Env   []string `json:"env,omitempty"`
	Stdin bool     `json:"stdin,omitempty"` // raw input follows the line
}

type frame struct {
	Out  *string `json:"o,omitempty"`
	Err  *string `json:"e,omitempty"`
	Exit *int    `json:"exit,omitempty"`
}

// Serve listens on the socket of dataDir, writes a fresh token to
// TokenName beside it, and runs each authenticated request with h, several
// at once. It replaces a stale socket left by a process that died; stop
// (safe to call more than once) closes the listener and the open
// connections and removes the socket and the token.
func Serve(dataDir string, h Handler) (stop func(), err error) {
	path := filepath.Join(dataDir, SocketName)
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("another Tally already serves %s; close it first", dataDir)
	}
	_ = os.Remove(path) // stale: nobody answers on it
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s (%w); command-line reads will wait for the app to close", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot restrict %s to its owner (%w)", path, err)
	}
	token, err := writeToken(filepath.Join(dataDir, TokenName))
	if err != nil {
		ln.Close()
		_ = os.Remove(path)
		return nil, err
	}
	srv := &server{h: h, token: token, conns: map[net.Conn]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !srv.track(c) {
				c.Close()
				return
			}
			go func() {
				defer srv.untrack(c)
				srv.serveConn(c)
			}()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			ln.Close()
			<-done
			srv.closeAll()
			_ = os.Remove(path)
			_ = os.Remove(filepath.Join(dataDir, TokenName))
		})
	}, nil
}

// writeToken writes a new random token to path, readable by its owner
// only, replacing a stale one, and returns it.
func writeToken(path string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cannot make a token for the app's socket (%w); command-line reads will wait for the app to close", err)
	}
	token := hex.EncodeToString(b[:])
	_ = os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // O_EXCL: never through a planted link
	if err == nil {
		_, err = f.WriteString(token)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("cannot write the socket's token %s (%w); check the data directory's permissions", path, err)
	}
	return token, nil
}

// server is the state of one Serve.
type server struct {
	h     Handler
	token string

	mu     sync.Mutex
	conns  map[net.Conn]bool // open connections, closed by stop
	closed bool
	wg     sync.WaitGroup
}

func (s *server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = true
	s.wg.Add(1)
	return true
}

func (s *server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// closeAll ends every open connection and waits, briefly, for their
// commands to return.
func (s *server) closeAll() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(2 * time.Second):
	}
}

// serveConn authenticates one client and runs its request. A client of
// another user, or without the token, gets one line saying it was refused
// and nothing else.
func (s *server) serveConn(c net.Conn) {
	defer c.Close()
	w := &frameWriter{c: c, enc: json.NewEncoder(c)}
	// The request is read before any refusal, so the client's write of
	// it has finished and it reads why it was refused.
	_ = c.SetReadDeadline(time.Now().Add(RequestTimeout))
	r := bufio.NewReaderSize(c, 64<<10)
	line, err := readLine(r, MaxRequest)
	if uid, ok := peerUID(c); ok && uid != ownerUID() {
		w.refuse("tally: the app's socket serves only the user who runs the app")
		return
	}
	var req request
	if err != nil || json.Unmarshal(line, &req) != nil {
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		w.refuse("tally: the request did not carry the app's token; run the command as the user who runs the app, outside the command sandbox")
		return
	}
	if len(req.Args) == 0 {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var stdin io.Reader = strings.NewReader("")
	if req.Stdin {
		stdin = r // what the client sent after its request line, then the rest
	}
	stdout, stderr := w.stream(true), w.stream(false)
	code := func() (code int) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(stderr, "tally: the running app failed on this command (%v); close the app and run it again\n", p)
				code = 1
			}
		}()
		return s.h(Request{Args: req.Args, Dir: req.Dir, Env: req.Env}, stdin, stdout, stderr)
	}()
	stdout.flush()
	stderr.flush()
	w.exit(code)
}

// readLine reads one line of at most max bytes from r, without its
// newline.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > max {
			return nil, fmt.Errorf("the request is longer than %d bytes", max)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// frameWriter turns writes to stdout and stderr into frames on one
// connection.
type frameWriter struct {
	mu  sync.Mutex
	c   net.Conn
	enc *json.Encoder
}

// send writes one frame within WriteTimeout.
func (fw *frameWriter) send(f frame) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_ = fw.c.SetWriteDeadline(time.Now().Add(WriteTimeout))
	return fw.enc.Encode(f)
}

func (fw *frameWriter) exit(code int) { _ = fw.send(frame{Exit: &code}) }

// refuse tells a client why it is not served, with exit status 1.
func (fw *frameWriter) refuse(why string) {
	text := why + "\n"
	_ = fw.send(frame{Err: &text})
	fw.exit(1)
}

// streamWriter is the command's standard output or error on the
// connection. A write that ends inside a UTF-8 character keeps the
// character's first bytes for the next write, so every frame's text is
// the command's own (JSON would replace half a character).
type streamWriter struct {
	fw      *frameWriter
	out     bool
	mu      sync.Mutex
	pending []byte // the start of a character cut by the last write
}

func (fw *frameWriter) stream(out bool) *streamWriter { return &streamWriter{fw: fw, out: out} }

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := append(s.pending, p...)
	cut := completeUTF8(data)
	s.pending = append([]byte(nil), data[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if err := s.send(data[:cut]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush sends what a last write left of a character.
func (s *streamWriter) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		_ = s.send(s.pending)
		s.pending = nil
	}
}

func (s *streamWriter) send(b []byte) error {
	text := string(b)
	f := frame{Err: &text}
	if s.out {
		f = frame{Out: &text}
	}
	return s.fw.send(f)
}

// completeUTF8 is the length of b without a UTF-8 character its end cuts
// short (invalid bytes count as complete: they are sent as they are).
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
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

// Call asks the Tally serving dataDir to run req, copying its output to
// stdout and stderr, and returns the command's exit status. With a stdin,
// the command reads it: Call copies it to the server until it ends. It
// returns an error matching ErrNoServer when nobody listens.
func Call(dataDir string, req Request, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, SocketName), 2*time.Second)
	if err != nil {
		return 0, fmt.Errorf("%w (%w)", ErrNoServer, err)
	}
	defer c.Close()
	token, err := os.ReadFile(filepath.Join(dataDir, TokenName))
	if err != nil {
		return 0, fmt.Errorf("%w (the socket's token cannot be read: %w)", ErrNoServer, err)
	}
	b, _ := json.Marshal(request{Token: strings.TrimSpace(string(token)), Args: req.Args, Dir: req.Dir, Env: req.Env, Stdin: stdin != nil})
	if _, err := c.Write(append(b, '\n')); err != nil {
		return 0, fmt.Errorf("%w (%w)", ErrNoServer, err)
	}
	if stdin != nil {
		go func() {
			_, _ = io.Copy(c, stdin)
			if uc, ok := c.(*net.UnixConn); ok {
				_ = uc.CloseWrite() // the command's input ends; its output goes on
			}
		}()
	}
	dec := json.NewDecoder(bufio.NewReader(c))
	for {
		var f frame
		if err := dec.Decode(&f); err != nil {
			return 0, fmt.Errorf("the running Tally stopped answering (%w); try again, or close the app and run the command then", err)
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
