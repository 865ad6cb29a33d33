package lsp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/tally-dev/tally/internal/proc"
	"github.com/tally-dev/tally/internal/serverlog"
	"github.com/tally-dev/tally/internal/text"
)

// State is where a server is in its life.
type State string

// The states of a server.
const (
	// StateStopped: not running; it starts when a file it handles is
	// synced or queried (or it was stopped by the last release).
	StateStopped State = "stopped"
	// StateStarting: started, waiting for its answer to initialize.
	StateStarting State = "starting"
	// StateRunning: initialized and in use.
	StateRunning State = "running"
	// StateFailed: it could not start, hung, or stopped again after its
	// one restart; it stays failed while the manager lives.
	StateFailed State = "failed"
	// StateNotInstalled: its command is not found; it is never started.
	StateNotInstalled State = "not-installed"
)

// ServerStatus is what a [Manager] tells about one configured server.
type ServerStatus struct {
	// Name is the server's configured name.
	Name string
	// State is its current state; Reason says why in one sentence when
	// it is failed, not installed or stopped, and is "" when running.
	State  State
	Reason string
	// Command is the program that runs (resolved) or would run.
	Command string
	// LogPath is the server's log file, "" when Options.LogDir is empty.
	LogPath string
	// Languages and Extensions are what it handles.
	Languages  []string
	Extensions []string
	// Restarts counts its restarts after a crash (at most one).
	Restarts int
}

// maxRestarts is how often a crashed server is started again.
const maxRestarts = 1

// stderrGrace bounds the wait for a stopped server's last error output.
const stderrGrace = 500 * time.Millisecond

// stopWait bounds each step of stopping a server (shutdown, then exit).
const stopWait = time.Second

// lookupEvery is how often a server whose command was not found looks
// for it again.
const lookupEvery = 10 * time.Second

// server is one configured language server of a manager.
type server struct {
	m       *Manager
	cfg     ServerConfig
	logPath string
	log     *serverlog.Log

	mu       sync.Mutex
	prog     string // the resolved program, "" when not found
	missing  string // why the program was not found
	lookedAt time.Time
	state    State
	reason   string
	restarts int
	gen      int   // incremented by every start and by stop
	c        *conn // the live connection, nil when none
}

// conn is one run of a server's process and its connection.
type conn struct {
	gen    int
	rpc    *jsonrpc2.Conn
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	stderr chan struct{} // closed when its stderr reached end of file
	kick   chan struct{} // wakes the sync loop
	ids    atomic.Int64
	caps   capabilities

	// Guarded by server.mu.
	open        map[string]sentDoc
	diags       map[string]*published
	lastPublish time.Time
	protoErr    string
}

func newServer(m *Manager, sc ServerConfig) *server {
	s := &server{m: m, cfg: sc, state: StateStopped}
	if m.opts.LogDir != "" {
		sum := sha256.Sum256([]byte(m.real))
		s.logPath = filepath.Join(m.opts.LogDir, sc.Name+"-"+hex.EncodeToString(sum[:4])+".log")
	}
	s.log = serverlog.New(s.logPath, LogLimit)
	s.lookupLocked()
	return s
}

// lookupLocked resolves the server's program when it was not found yet,
// at most every lookupEvery.
func (s *server) lookupLocked() {
	if s.prog != "" || time.Since(s.lookedAt) < lookupEvery && !s.lookedAt.IsZero() {
		return
	}
	s.lookedAt = time.Now()
	s.prog, s.missing = lookup(s.cfg, envValue(s.m.env, "PATH"), s.m.opts.SearchDirs)
	if s.prog == "" {
		s.state = StateNotInstalled
	} else if s.state == StateNotInstalled {
		s.state = StateStopped
	}
}

// installed reports whether the server's program was found.
func (s *server) installed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookupLocked()
	return s.prog != ""
}

// status returns the server's status.
func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookupLocked()
	st := ServerStatus{
		Name: s.cfg.Name, State: s.state, Reason: s.reason, Command: s.cfg.Command, LogPath: s.logPath,
		Languages: s.cfg.Languages, Extensions: s.cfg.Extensions, Restarts: s.restarts,
	}
	if s.prog != "" {
		st.Command = s.prog
	}
	switch {
	case s.state == StateNotInstalled:
		st.Reason = s.missing
	case s.state == StateStopped && st.Reason == "":
		st.Reason = "not started yet; it starts when a file it handles is synced or queried"
	}
	return st
}

// setLocked changes the state and wakes the manager's waiters; the
// caller holds s.mu.
func (s *server) setLocked(st State, reason string) {
	s.state, s.reason = st, reason
	s.m.notify()
}

// ensure starts the server when it is stopped (never started) and found.
func (s *server) ensure() {
	if s.m.isClosed() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookupLocked()
	if s.state != StateStopped || s.prog == "" {
		return
	}
	s.startLocked("")
}

// startLocked begins a start in the background; the caller holds s.mu.
func (s *server) startLocked(reason string) {
	s.gen++
	s.c = nil
	s.setLocked(StateStarting, reason)
	go s.start(s.gen)
}

// start runs start number gen: the process, the connection and the
// initialize handshake, bounded by StartTimeout.
func (s *server) start(gen int) {
	c, err := s.spawn(gen)
	if err != nil {
		s.mu.Lock()
		if s.gen == gen {
			s.setLocked(StateFailed, err.Error())
		}
		s.mu.Unlock()
		return
	}
	if c == nil {
		return // stopped meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.StartTimeout)
	defer cancel()
	var res initializeResult
	if err := s.call(ctx, c, "initialize", s.initializeParams(), &res); err != nil {
		if errors.Is(err, errGone) {
			return // the exit watcher reports it
		}
		s.fail(c, fmt.Sprintf("the language server %q did not complete initialize (%v); %s", s.cfg.Name, err, s.advice()))
		return
	}
	c.caps = parseCapabilities(res.Capabilities)
	if err := s.notify(c, "initialized", struct{}{}); err != nil {
		return
	}
	s.mu.Lock()
	if s.c != c {
		s.mu.Unlock()
		return
	}
	s.setLocked(StateRunning, "")
	s.mu.Unlock()
	s.log.Note("initialized")
	go s.syncLoop(c)
	c.wake()
}

// spawn starts the process of start gen and its connection; it returns
// nil, nil when the server was stopped meanwhile.
func (s *server) spawn(gen int) (*conn, error) {
	s.mu.Lock()
	prog := s.prog
	s.mu.Unlock()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, s.startErr(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, s.startErr(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, s.startErr(err)
	}
	closeChild := func() { inR.Close(); outW.Close(); errW.Close() }
	closeAll := func() { closeChild(); inW.Close(); outR.Close(); errR.Close() }
	cmd := exec.Command(prog, s.cfg.Args...)
	cmd.Dir = s.m.real
	cmd.Env = setEnv(s.m.env, s.cfg.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if s.m.opts.Confine != nil {
		wrapped, err := s.m.opts.Confine(cmd)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("the language server %q cannot start in the sandbox (%w); check the sandbox settings or set the server's command", s.cfg.Name, err)
		}
		cmd = wrapped
	}
	if cmd.SysProcAttr == nil {
		proc.StartInGroup(cmd)
	}
	s.log.Note("starting " + strings.Join(append([]string{prog}, s.cfg.Args...), " "))
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, s.startErr(err)
	}
	closeChild()
	c := &conn{
		gen: gen, cmd: cmd, done: make(chan struct{}), kick: make(chan struct{}, 1), stderr: make(chan struct{}),
		open: map[string]sentDoc{}, diags: map[string]*published{},
	}
	go func() {
		_, _ = io.Copy(s.log, errR)
		errR.Close()
		close(c.stderr)
	}()
	stream := jsonrpc2.NewBufferedStream(pipes{r: outR, w: inW}, codec{malformed: func(err error) { s.malformed(c, err) }})
	c.rpc = jsonrpc2.NewConn(context.Background(), stream, &handler{s: s, c: c}, jsonrpc2.SetLogger(protoLogger{s: s}))
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		c.kill()
		go func() { _ = cmd.Wait(); close(c.done) }()
		return nil, nil
	}
	s.c = c
	s.mu.Unlock()
	go s.wait(c)
	go func() {
		// A server that closed its output but lives on is ended, so its
		// end is reported like a crash.
		select {
		case <-c.rpc.DisconnectNotify():
			select {
			case <-c.done:
			case <-time.After(stopWait):
				c.kill()
			}
		case <-c.done:
		}
	}()
	return c, nil
}

func (s *server) startErr(err error) error {
	return fmt.Errorf("the language server %q could not be started (%w); %s", s.cfg.Name, err, s.advice())
}

// advice tells what to do about a failing server.
func (s *server) advice() string {
	if s.logPath != "" {
		return "check its configuration and its log " + s.logPath
	}
	return "check its configuration"
}

// wait watches the process of c and reports its end.
func (s *server) wait(c *conn) {
	err := c.cmd.Wait()
	close(c.done)
	grace := time.After(stderrGrace)
	select { // what it wrote to stdout last, which may be why it ended
	case <-c.rpc.DisconnectNotify():
	case <-grace:
	}
	c.rpc.Close()
	select { // its last words, unless a child it left behind holds stderr
	case <-c.stderr:
	case <-grace:
	}
	detail := "it exited"
	if err != nil {
		detail = err.Error()
	}
	if code := c.cmd.ProcessState; code != nil && code.Exited() && code.ExitCode() == 0 {
		detail = "it exited with status 0"
	}
	s.exited(c, detail)
}

// exited records the end of c's process: nothing when Tally ended it on
// purpose; otherwise a crash, restarted once.
func (s *server) exited(c *conn, detail string) {
	s.log.Close()
	last := s.log.LastLine()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != c {
		return
	}
	s.c = nil
	msg := fmt.Sprintf("the language server %q stopped (%s)", s.cfg.Name, text.OneLine(detail, 200))
	if c.protoErr != "" {
		msg += ", " + c.protoErr
	}
	if last != "" {
		msg += fmt.Sprintf(", its last error output was %q", last)
	}
	s.log.Note(msg)
	if s.restarts < maxRestarts && !s.m.isClosed() {
		s.restarts++
		s.startLocked(msg + "; it is being restarted once")
		return
	}
	s.gen++
	s.setLocked(StateFailed, msg+" again after a restart; "+s.advice())
}

// fail marks the server failed for good because of c (a hang, a refused
// handshake) and kills c's process; for a c that is no longer the live
// connection (one being stopped) it only kills.
func (s *server) fail(c *conn, reason string) {
	s.mu.Lock()
	if s.c != c {
		s.mu.Unlock()
		c.kill()
		return
	}
	s.c = nil
	s.gen++
	s.setLocked(StateFailed, reason)
	s.mu.Unlock()
	s.log.Note(reason)
	c.kill()
}

// kill ends c's process and everything it started (its process group,
// or the sandbox's, whose helper kills the rest).
func (c *conn) kill() {
	select {
	case <-c.done:
	default:
		_ = proc.KillGroup(c.cmd)
		_ = c.cmd.Process.Kill() // in case a Confine left it in Tally's group
	}
	if c.rpc != nil {
		c.rpc.Close()
	}
}

// wake asks the sync loop of c to bring the server up to date.
func (c *conn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// stop ends the server for the manager's release: shutdown and exit
// within stopWait each, then a kill.
func (s *server) stop() {
	s.mu.Lock()
	c := s.c
	s.c = nil
	s.gen++
	if s.state != StateNotInstalled {
		s.setLocked(StateStopped, "stopped when the workspace was released")
	}
	s.mu.Unlock()
	if c == nil {
		s.log.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	err := s.call(ctx, c, "shutdown", nil, nil)
	cancel()
	if err == nil {
		_ = s.notify(c, "exit", nil)
	}
	select {
	case <-c.done:
	case <-time.After(stopWait):
	}
	c.kill()
	select {
	case <-c.done:
	case <-time.After(stopWait):
	}
	s.log.Note("stopped")
	s.log.Close()
}

// live returns the live connection when the server is running.
func (s *server) live() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateRunning {
		return s.c
	}
	return nil
}

// errGone reports a request on a connection that ended.
var errGone = errors.New("the server's connection ended")

// request is call bounded by RequestTimeout.
func (s *server) request(ctx context.Context, c *conn, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.RequestTimeout)
	defer cancel()
	return s.call(ctx, c, method, params, result)
}

// call sends one request on c and decodes its answer into result (nil
// ignores it), waiting at most until ctx ends. A request the server did
// not answer in time is cancelled; one it does not even read within
// RequestTimeout marks the server failed, which ends the write.
func (s *server) call(ctx context.Context, c *conn, method string, params, result any) error {
	began := time.Now()
	id := jsonrpc2.ID{Num: uint64(c.ids.Add(1))}
	var raw json.RawMessage
	done := make(chan error, 1)
	waitCtx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	go func() {
		t := time.AfterFunc(s.m.opts.RequestTimeout, func() { s.fail(c, s.deafReason()) })
		w, err := c.rpc.DispatchCall(context.Background(), method, params, jsonrpc2.PickID(id))
		t.Stop()
		if err != nil {
			done <- errGone // the write failed: the server closed its input or exited
			return
		}
		done <- w.Wait(waitCtx, &raw)
	}()
	select {
	case err := <-done:
		switch {
		case errors.Is(err, errGone), errors.Is(err, jsonrpc2.ErrClosed), errors.Is(err, io.EOF), errors.Is(err, os.ErrClosed):
			return errGone
		case err != nil:
			var rpcErr *jsonrpc2.Error
			if errors.As(err, &rpcErr) {
				return fmt.Errorf("it answered %s with the error %q", method, text.OneLine(rpcErr.Message, 200))
			}
			return fmt.Errorf("%s failed: %w", method, err)
		}
		if result != nil && len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, result); err != nil {
				return fmt.Errorf("its answer to %s cannot be read (%w)", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		go func() { _ = c.rpc.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id.Num}) }()
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		return fmt.Errorf("no answer to %s within %s", method, time.Since(began).Round(time.Millisecond))
	}
}

// deafReason is the reason of a server that does not read its input.
func (s *server) deafReason() string {
	return fmt.Sprintf("the language server %q did not read its input within %s; %s", s.cfg.Name, s.m.opts.RequestTimeout, s.advice())
}

// notify sends one notification on c; a server that does not read it
// within RequestTimeout is marked failed, which unblocks the write.
func (s *server) notify(c *conn, method string, params any) error {
	t := time.AfterFunc(s.m.opts.RequestTimeout, func() { s.fail(c, s.deafReason()) })
	defer t.Stop()
	return c.rpc.Notify(context.Background(), method, params)
}

// protoLogger takes the connection library's complaints into the log.
type protoLogger struct {
	s *server
}

func (l protoLogger) Printf(format string, v ...any) {
	l.s.log.Note(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// malformed records that c's server sent what cannot be read, which is
// the reason of its end, and ends its process: the connection is closing
// already.
func (s *server) malformed(c *conn, err error) {
	s.mu.Lock()
	c.protoErr = "its output could not be read: " + text.OneLine(err.Error(), 200)
	s.mu.Unlock()
	select {
	case <-c.done:
	default:
		_ = proc.KillGroup(c.cmd)
	}
}
