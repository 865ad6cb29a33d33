// Package acp serves Tally's engine to code editors over the Agent Client
// Protocol (https://agentclientprotocol.com), as newline-delimited JSON-RPC
// on a pair of streams (the `tally acp` command's standard input and
// output). An editor creates, loads, resumes, lists, closes and deletes
// Tally sessions of the same store the app and `tally run` use, sends
// prompts and sees the turn as it streams: message and reasoning chunks
// with their message IDs, tool calls with their diffs and status, the
// checklist as the plan, and the ledger's context level and cost as
// usage updates. Approvals are asked with session/request_permission; the
// permission mode, the model and the Network switch are the session's
// config options (the mode is also its session mode); the MCP servers'
// forms are asked with elicitation/create.
//
// Tally's file tools check every path on disk (confined to the workspace,
// the secret-file deny list refused) and snapshot every file they change
// for rewind. Where the editor offers fs/read_text_file they then read a
// text file's buffer from it, unsaved changes included, and where it
// offers fs/write_text_file they show it what they wrote (see editor).
// The package reaches the engine only through engine/workbench and
// agent.Session.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
)

// Options configure a server.
type Options struct {
	// Open opens the data directory. It is called at the first request
	// that needs the store, and again at the next one after it failed
	// (the app may have been closed in between). Required.
	Open func() (*workbench.Workbench, error)
	// Session returns the configuration of session id ("" for a new one)
	// before the server adds its own approver and event sink: the
	// command line's flags. Nil uses the saved settings alone.
	Session func(id string) workbench.SessionOptions
	// Version is Tally's version, sent in initialize.
	Version string
	// Log receives diagnostics, one line each; nil discards them.
	Log io.Writer
	// FetchLocal lets web_fetch reach loopback and link-local pages in
	// every session (tally acp --fetch-local).
	FetchLocal bool
	// Network, "on" or "off", turns the Network switch of every session
	// the server opens and stores it (tally acp --network); "" keeps each
	// session's own. The editor turns it with the "network" config option.
	Network string
}

// Serve answers one ACP client on in and out until in ends or ctx is
// cancelled. Running turns are then cancelled, the sessions closed and the
// workbench Open returned is closed. It returns nil on a normal end.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	if o.Open == nil {
		return errors.New("acp: Options.Open is required; pass a function that opens the workbench")
	}
	s := newServer(o)
	l := newLedger()
	s.ledger = l
	pr, pw := io.Pipe()
	defer pr.Close()
	w := newCountingWriter(out, l)
	conn := acp.NewAgentSideConnection(s, w, pr)
	conn.SetLogger(slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	s.conn = conn
	pumped := make(chan struct{})
	go func() {
		pump(in, pw, w, l)
		close(pumped)
	}()
	select {
	case <-pumped:
		// The client closed its end: nobody will answer an approval or
		// read a turn, so running turns stop; every request read still
		// gets its answer before the connection closes.
		s.cancelAll()
		l.wait(drainLimit)
		pw.Close()
		<-conn.Done()
	case <-conn.Done():
	case <-ctx.Done():
	}
	s.shutdown()
	return nil
}

// drainLimit bounds how long the server waits, once the client's stream
// has ended, for the answers to the requests it had sent.
const drainLimit = 10 * time.Second

// cancelAll cancels every running prompt.
func (s *Server) cancelAll() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, st := range s.sessions {
		all = append(all, st)
	}
	s.mu.Unlock()
	for _, st := range all {
		st.cancel()
	}
}

// Server is the agent side of one ACP connection. Its methods implement
// acp.Agent and acp.AgentLoader; every one answers any input with a
// response or a JSON-RPC error, never a panic.
type Server struct {
	o      Options
	log    io.Writer
	conn   *acp.AgentSideConnection
	ledger *ledger // the connection's requests and answers

	mu       sync.Mutex
	wb       *workbench.Workbench
	client   acp.ClientCapabilities
	sessions map[string]*session
	closed   bool
}

var (
	_ acp.Agent       = (*Server)(nil)
	_ acp.AgentLoader = (*Server)(nil)
)

func newServer(o Options) *Server {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	return &Server{o: o, log: log, sessions: make(map[string]*session)}
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "tally acp: "+format+"\n", args...)
}

// workbench returns the open workbench, opening it on first use.
func (s *Server) workbench() (*workbench.Workbench, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the server is shutting down; start it again")
	}
	if s.wb != nil {
		return s.wb, nil
	}
	wb, err := s.o.Open()
	if err != nil {
		return nil, err
	}
	s.wb = wb
	return wb, nil
}

// shutdown cancels every running turn, closes the sessions and the store.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closed = true
	all := make([]*session, 0, len(s.sessions))
	for _, st := range s.sessions {
		all = append(all, st)
	}
	s.sessions = map[string]*session{}
	wb := s.wb
	s.wb = nil
	s.mu.Unlock()
	for _, st := range all {
		st.close()
	}
	if wb != nil {
		wb.Close()
	}
}

// Initialize implements acp.Agent: it names Tally, agrees on protocol
// version 1 and says what Tally supports.
func (s *Server) Initialize(_ context.Context, p acp.InitializeRequest) (_ acp.InitializeResponse, err error) {
	defer s.guard("Initialize", &err)
	s.mu.Lock()
	s.client = p.ClientCapabilities
	s.mu.Unlock()
	version := acp.ProtocolVersion(acp.ProtocolVersionNumber)
	if p.ProtocolVersion < version && p.ProtocolVersion >= 1 {
		version = p.ProtocolVersion
	}
	return acp.InitializeResponse{
		ProtocolVersion: version,
		AgentInfo:       &acp.Implementation{Name: "tally", Title: acp.Ptr("Tally"), Version: s.version()},
		AuthMethods:     []acp.AuthMethod{},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    acp.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: acp.SessionCapabilities{
				List:   &acp.SessionListCapabilities{},
				Close:  &acp.SessionCloseCapabilities{},
				Resume: &acp.SessionResumeCapabilities{},
				Delete: &acp.SessionDeleteCapabilities{},
				Fork:   &acp.SessionForkCapabilities{},
				// Each additional directory is a folder of the session:
				// the file tools reach it by absolute path, commands may
				// write in it, and its changes are checkpointed.
				AdditionalDirectories: &acp.SessionAdditionalDirectoriesCapabilities{},
			},
			Meta: map[string]any{"tally": map[string]any{
				"fileSystem": FileSystemNote,
				"modes":      modeIDs(),
			}},
		},
	}, nil
}

// FileSystemNote is what initialize tells the client about its fs/*
// methods.
const FileSystemNote = "Tally's file tools check every path on disk (confined to the workspace, no secret files) and snapshot every change for rewind; " +
	"where the client offers fs/read_text_file they read a text file's buffer from it (unsaved changes included), " +
	"and where it offers fs/write_text_file they show it what they wrote. Commands read the files on disk."

func (s *Server) version() string {
	if s.o.Version != "" {
		return s.o.Version
	}
	return "dev"
}

// Authenticate implements acp.Agent. Tally offers no authentication
// methods (the model's API key comes from its settings or environment),
// so there is nothing to do.
func (s *Server) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession implements acp.Agent: it stores a new Tally session over cwd
// and opens it. It fails when no model endpoint is configured, saying
// what to set.
func (s *Server) NewSession(_ context.Context, p acp.NewSessionRequest) (_ acp.NewSessionResponse, err error) {
	defer s.guard("NewSession", &err)
	dirs, err := extraDirs(p.AdditionalDirectories)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	ws, err := workspaceDir(p.Cwd)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	wb, err := s.workbench()
	if err != nil {
		return acp.NewSessionResponse{}, failure(err)
	}
	if _, err := agent.CheckRoots(ws, dirs, filepath.Dir(wb.Path())); err != nil {
		return acp.NewSessionResponse{}, invalid("%s", sentence(err.Error()))
	}
	st := s.newSession()
	cfg, cfgErr := wb.Config(st.options(""))
	if cfgErr != nil {
		return acp.NewSessionResponse{}, failure(cfgErr)
	}
	s.configure(&cfg, p.McpServers)
	cfg.Roots = dirs
	sess, err := wb.CreateSession(cfg, ws, "")
	if err != nil {
		return acp.NewSessionResponse{}, failure(err)
	}
	if err := s.register(st, sess); err != nil {
		return acp.NewSessionResponse{}, err
	}
	st.commandsLater()
	return acp.NewSessionResponse{SessionId: acp.SessionId(sess.Snapshot().Meta.ID), Modes: st.modes(), ConfigOptions: st.configOptions()}, nil
}

// LoadSession implements acp.AgentLoader: it opens a stored session and
// replays its conversation (the current cycle) and checklist as updates
// before it answers.
func (s *Server) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (_ acp.LoadSessionResponse, err error) {
	defer s.guard("LoadSession", &err)
	dirs, err := extraDirs(p.AdditionalDirectories)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	st, err := s.open(string(p.SessionId), p.McpServers, dirs)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	st.replay(ctx)
	st.commandsLater()
	return acp.LoadSessionResponse{Modes: st.modes(), ConfigOptions: st.configOptions()}, nil
}

// ResumeSession implements acp.Agent: it opens a stored session without
// replaying it.
func (s *Server) ResumeSession(_ context.Context, p acp.ResumeSessionRequest) (_ acp.ResumeSessionResponse, err error) {
	defer s.guard("ResumeSession", &err)
	dirs, err := extraDirs(p.AdditionalDirectories)
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	st, err := s.open(string(p.SessionId), p.McpServers, dirs)
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	st.commandsLater()
	return acp.ResumeSessionResponse{Modes: st.modes(), ConfigOptions: st.configOptions()}, nil
}

// open returns session id with the additional folders dirs, opening it
// from the store unless this connection has it open already (with the
// same folders).
func (s *Server) open(id string, servers []acp.McpServer, dirs []string) (*session, error) {
	if err := agent.ValidID(id); err != nil {
		return nil, notFound(id)
	}
	wb, err := s.workbench()
	if err != nil {
		return nil, failure(err)
	}
	info, err := wb.Session(id)
	if errors.Is(err, workbench.ErrNotFound) {
		return nil, notFound(id)
	} else if err != nil {
		return nil, failure(err)
	}
	want, err := agent.CheckRoots(info.Workspace, dirs, filepath.Dir(wb.Path()))
	if err != nil {
		return nil, invalid("%s", sentence(err.Error()))
	}
	if st := s.session(id); st != nil {
		if !slices.Equal(agent.Roots(info), want) {
			return nil, invalid("session %s is open on this connection with other additional directories; close it with session/close, then load it with these", id)
		}
		return st, nil
	}
	st := s.newSession()
	cfg, cfgErr := wb.Config(st.options(id))
	switch {
	case errors.Is(cfgErr, workbench.ErrNoModel):
		st.noModel = cfgErr // its history can be shown; turns say what to set
	case cfgErr != nil:
		return nil, failure(cfgErr)
	}
	s.configure(&cfg, servers)
	cfg.Roots = dirs
	sess, err := wb.OpenSession(cfg, id)
	if errors.Is(err, workbench.ErrLocked) {
		return nil, failuref("session %s is open in another Tally (the app or a tally run); close it there and load it again", id)
	}
	if err != nil {
		return nil, failure(err)
	}
	if err := s.register(st, sess); err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Server) newSession() *session {
	st := &session{srv: s, calls: make(map[string]*callInfo)}
	st.idle = make(chan struct{}, 1)
	st.idle <- struct{}{}
	return st
}

// register makes sess reachable under its ID; a session opened twice at
// once keeps the first and closes the second.
func (s *Server) register(st *session, sess *agent.Session) error {
	st.attach(sess)
	if s.o.Network != "" {
		if err := sess.Permissions().SetAllowNetwork(s.o.Network == "on"); err != nil {
			sess.Close()
			return failuref("the Network switch of session %s could not be stored (%s); try again", st.id, sentence(err.Error()))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		sess.Close()
		return failuref("the server is shutting down; start it again")
	}
	if _, ok := s.sessions[sess.Snapshot().Meta.ID]; ok {
		sess.Close()
		return failuref("session %s is being opened by another request; load it again", sess.Snapshot().Meta.ID)
	}
	s.sessions[sess.Snapshot().Meta.ID] = st
	return nil
}

func (s *Server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// known returns session id of this connection, or the error for one it
// has not opened.
func (s *Server) known(id acp.SessionId) (*session, error) {
	if st := s.session(string(id)); st != nil {
		return st, nil
	}
	return nil, &acp.RequestError{Code: codeNotFound, Message: fmt.Sprintf(
		"session %q is not open on this connection; create it with session/new or open it with session/load", string(id))}
}

// ListSessions implements acp.Agent: Tally's stored sessions, the most
// recently updated first, only those over cwd when it is given.
func (s *Server) ListSessions(_ context.Context, p acp.ListSessionsRequest) (_ acp.ListSessionsResponse, err error) {
	defer s.guard("ListSessions", &err)
	wb, err := s.workbench()
	if err != nil {
		return acp.ListSessionsResponse{}, failure(err)
	}
	infos, err := wb.Sessions()
	if err != nil {
		return acp.ListSessionsResponse{}, failure(err)
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].Updated.After(infos[j].Updated) })
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for _, in := range infos {
		if p.Cwd != nil && *p.Cwd != "" && filepath.Clean(*p.Cwd) != filepath.Clean(in.Workspace) {
			continue
		}
		if in.Workspace == "" || !filepath.IsAbs(in.Workspace) {
			continue // the protocol's cwd is absolute
		}
		info := acp.SessionInfo{SessionId: acp.SessionId(in.ID), Cwd: in.Workspace, AdditionalDirectories: agent.Roots(in)}
		if in.Title != "" {
			info.Title = acp.Ptr(in.Title)
		}
		if !in.Updated.IsZero() {
			info.UpdatedAt = acp.Ptr(in.Updated.UTC().Format(time.RFC3339))
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// CloseSession implements acp.Agent: it cancels the session's turn, waits
// for it and closes the session. Closing a session that is not open
// succeeds.
func (s *Server) CloseSession(_ context.Context, p acp.CloseSessionRequest) (_ acp.CloseSessionResponse, err error) {
	defer s.guard("CloseSession", &err)
	s.mu.Lock()
	st := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if st != nil {
		st.close()
	}
	return acp.CloseSessionResponse{}, nil
}

// Cancel implements acp.Agent. The connection has already cancelled the
// session's running prompt, whose turn then ends with stopReason
// "cancelled"; an approval it was waiting for is denied.
func (s *Server) Cancel(_ context.Context, p acp.CancelNotification) (err error) {
	defer s.guard("Cancel", &err)
	if st := s.session(string(p.SessionId)); st != nil {
		st.cancel()
	}
	return nil
}

// Prompt implements acp.Agent: it runs one user turn of the session and
// reports how it ended. Updates stream while it runs.
func (s *Server) Prompt(ctx context.Context, p acp.PromptRequest) (_ acp.PromptResponse, err error) {
	defer s.guard("Prompt", &err)
	st, err := s.known(p.SessionId)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return st.prompt(ctx, p.Prompt)
}

// guard turns a panic in a handler into the request's error, logged with
// its stack, so that no input ends the connection.
func (s *Server) guard(method string, err *error) {
	if r := recover(); r != nil {
		s.logf("%s failed unexpectedly: %v\n%s", method, r, debug.Stack())
		*err = failuref("Tally failed unexpectedly answering %s (%v); the details are in its log", method, r)
	}
}

// JSON-RPC error codes the server answers with.
const (
	codeInvalidParams = -32602
	codeInternal      = -32603
	codeNotFound      = -32002 // ACP's "resource not found"
)

func notFound(id string) error {
	return &acp.RequestError{Code: codeNotFound, Message: fmt.Sprintf("no Tally session with ID %q; tally sessions lists them", id)}
}

// failure is err as a JSON-RPC error: its one sentence.
func failure(err error) error {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re
	}
	return &acp.RequestError{Code: codeInternal, Message: sentence(err.Error())}
}

func failuref(format string, args ...any) error {
	return &acp.RequestError{Code: codeInternal, Message: fmt.Sprintf(format, args...)}
}

// sentence is an engine message without its package prefixes.
func sentence(msg string) string {
	for {
		i := strings.Index(msg, ": ")
		if i <= 0 || strings.ContainsAny(msg[:i], " \t") {
			break
		}
		switch msg[:i] {
		case "agent", "workbench", "storage", "llm", "config", "mcp", "tool", "transcript":
			msg = msg[i+2:]
			continue
		}
		break
	}
	if first, _, ok := strings.Cut(msg, "\n"); ok {
		msg = first
	}
	return msg
}

// workspaceDir checks a client's cwd: an absolute path.
func workspaceDir(cwd string) (string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", &acp.RequestError{Code: codeInvalidParams, Message: fmt.Sprintf(
			"cwd must be an absolute path to the project folder, not %q", cwd)}
	}
	return filepath.Clean(cwd), nil
}

func modeIDs() []string {
	out := make([]string, len(tool.Modes))
	for i, m := range tool.Modes {
		out[i] = string(m)
	}
	return out
}
