package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/internal/serverlog"
	"github.com/tally-dev/tally/internal/text"
)

// State is a server's connection state, for the status banner.
type State string

// The states a server can be in.
const (
	// StateDisabled: the configuration disables the server.
	StateDisabled State = "disabled"
	// StateIdle: configured but not started yet.
	StateIdle State = "idle"
	// StateConnected: the server answered and listed its tools.
	StateConnected State = "connected"
	// StateFailed: the server could not be started or reached, or it
	// crashed again after its one restart; calls fail until the caller
	// connects it again.
	StateFailed State = "failed"
	// StateCrashed: the server stopped after connecting; the next call
	// restarts it, once.
	StateCrashed State = "crashed"
	// StateStopped: Tally closed the server.
	StateStopped State = "stopped"
	// StateUntrusted: a workspace server whose configuration, or a
	// workspace file its command runs, changed since the user trusted it;
	// it is not started (nor restarted) until the user trusts it again.
	StateUntrusted State = "untrusted"
)

// ServerStatus is one server's state for the UI.
type ServerStatus struct {
	Name  string
	State State
	// Reason says, in one sentence, why the server is not connected (or
	// what went wrong last); "" when all is well.
	Reason string
	// Tools counts the tools the server listed.
	Tools int
	// Restarts counts the restarts after a crash (at most one).
	Restarts int
	// LogPath is the server's stderr log, "" when none is kept.
	LogPath string
	// Source is the configuration file the server came from.
	Source string
	// Protocol is the MCP revision the last connection spoke: "2026-07-28"
	// (no handshake, version and capabilities sent with every request) or
	// an older one such as "2025-11-25" (the initialize handshake); ""
	// before the server first connected.
	Protocol string
}

// streamRetries is how often a streamable HTTP connection whose event
// stream broke is resumed (with Last-Event-ID, after the server's retry
// delay) before the server counts as stopped.
const streamRetries = 3

// maxRestarts is how often a crashed server is restarted.
const maxRestarts = 1

// maxTools bounds the tools taken from one server's listing.
const maxTools = 1000

// terminateWait is how long a stdio server gets to exit after its stdin
// is closed, and again after SIGTERM, before it is killed.
const terminateWait = 2 * time.Second

// windowsBasics are the Windows variables a child process needs to run at
// all; they hold no secrets and are absent elsewhere.
var windowsBasics = []string{
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE",
	"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "TEMP", "TMP",
}

// server is the connection to one configured MCP server.
type server struct {
	name string
	cfg  ServerConfig
	m    *Manager
	log  *serverlog.Log

	connMu sync.Mutex // held while connecting, so concurrent calls share one attempt

	mu       sync.Mutex
	cs       *sdk.ClientSession
	gen      int // bumped on every connection
	state    State
	reason   string
	tools    int
	restarts int
	allowRO  bool
	protocol string                   // the MCP revision the connection speaks
	listed   time.Time                // when the tools were last listed
	fresh    time.Duration            // how long the server said that list stays fresh
	relist   bool                     // a listing is under way
	kept     *keptAuth                // the OAuth handler of an HTTP server's session
	cb       *callback                // the loopback redirect of a sign-in under way
	pages    map[string]chan struct{} // pages opened for a refused call, by elicitation ID, closed when done
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ServerStatus{
		Name: s.name, State: s.state, Reason: s.reason, Tools: s.tools,
		Restarts: s.restarts, LogPath: s.log.Path(), Source: s.cfg.Source,
		Protocol: s.protocol,
	}
}

// setState records a new state and tells the manager's listener. The
// reason is redacted: it may quote the server's error output or command.
func (s *server) setState(st State, reason string) {
	reason = redact(reason)
	s.mu.Lock()
	s.state, s.reason = st, reason
	s.mu.Unlock()
	if st != StateConnected && reason != "" {
		s.log.Note(string(st) + ": " + reason)
	}
	s.m.notify(s.status())
}

// setStateOf is setState for the end of connection gen: it does nothing
// once a newer connection replaced that one.
func (s *server) setStateOf(gen int, st State, reason string) {
	reason = redact(reason)
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		return
	}
	s.state, s.reason = st, reason
	s.mu.Unlock()
	s.log.Note(string(st) + ": " + reason)
	s.m.notify(s.status())
}

// connect starts or reaches the server, initialises the session and lists
// its tools, all within the server's timeout. On failure the state is
// StateFailed with the reason, which is also returned.
func (s *server) connect(ctx context.Context) ([]toolInfo, error) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.connectLocked(ctx)
}

func (s *server) connectLocked(ctx context.Context) ([]toolInfo, error) {
	s.closeSession()
	if s.cfg.Workspace && s.m.opts.Verify != nil {
		// Trust is checked again before every start and restart: the
		// agent may have rewritten the script since.
		if err := s.m.opts.Verify(s.name, s.cfg); err != nil {
			s.setState(StateUntrusted, err.Error())
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout())
	defer cancel()
	t, err := s.transport()
	if err != nil {
		s.setState(StateFailed, err.Error())
		return nil, err
	}
	s.log.Note("connecting to " + s.describe())
	client := sdk.NewClient(&sdk.Implementation{Name: "tally", Version: s.m.opts.clientVersion()}, &sdk.ClientOptions{
		// The SDK's warnings, such as a tool it left out, go to the log.
		Logger: slog.New(sdkLog{s: s}),
		// No roots (deprecated in 2026-07-28, and Tally has none to
		// give) and no sampling; elicitation in form and URL mode.
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{},
		}},
		// A server that adds tools says so; they join the catalog at its
		// end, like a server that connects late.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go s.m.refresh(s) },
		// Forms and pages a server asks for reach the user.
		ElicitationHandler:         s.elicit,
		ElicitationCompleteHandler: s.pageDone,
		// A server whose prompts or resources changed is listed again
		// the next time they are asked for.
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { s.forgetLists() },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { s.forgetLists() },
	})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil && s.signInNeeded() {
		err = s.signInError()
		s.setState(StateSignIn, err.Error())
		return nil, err
	}
	if err != nil {
		err = s.failure(ctx, "could not be started or reached", err)
		s.setState(StateFailed, err.Error())
		return nil, err
	}
	infos, fresh, err := listTools(ctx, cs)
	if err != nil {
		_ = cs.Close()
		err = s.failure(ctx, "did not list its tools", err)
		s.setState(StateFailed, err.Error())
		return nil, err
	}
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.cs = cs
	s.tools = len(infos)
	s.protocol = protocolOf(cs)
	s.listed, s.fresh = time.Now(), fresh
	s.mu.Unlock()
	s.setState(StateConnected, "")
	go s.watch(gen, cs)
	return infos, nil
}

// failure builds the one-sentence reason of a failed start or call.
func (s *server) failure(ctx context.Context, what string, err error) error {
	detail := err.Error()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		detail = fmt.Sprintf("no answer within %s", s.cfg.ConnectTimeout())
	}
	msg := fmt.Sprintf("the MCP server %q %s (%s)", s.name, what, text.OneLine(detail, 300))
	if last := s.log.LastLine(); last != "" {
		msg += fmt.Sprintf(", its last error output was %q", last)
	}
	return errors.New(msg + "; " + s.advice())
}

// advice tells what to do about a failing server.
func (s *server) advice() string {
	if s.log.Path() != "" {
		return "check its settings and its log " + s.log.Path()
	}
	return "check its settings"
}

func (s *server) describe() string {
	if s.cfg.Kind() == TypeStdio {
		return strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
	}
	return s.cfg.URL
}

// transport builds the SDK transport for the server's configuration.
func (s *server) transport() (sdk.Transport, error) {
	switch s.cfg.Kind() {
	case TypeStdio:
		cmd, err := s.stdioCommand()
		if err != nil {
			return nil, err
		}
		if s.cfg.Workspace && s.m.opts.Confine != nil {
			if cmd, err = s.m.opts.Confine(cmd); err != nil {
				return nil, fmt.Errorf("the workspace's MCP server %q cannot start in the sandbox: %w", s.name, err)
			}
		}
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, nil
	case TypeHTTP, TypeSSE:
		headers := make(map[string]string, len(s.cfg.Headers))
		for k, v := range s.cfg.Headers {
			var err error
			if headers[k], err = expandRefs(v, s.cfg.Workspace); err != nil {
				return nil, fmt.Errorf("the MCP server %q cannot start: %w", s.name, err)
			}
		}
		hc := &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: headers}}
		if s.cfg.Kind() == TypeSSE {
			return &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil
		}
		oh, err := s.oauthHandler()
		if err != nil {
			return nil, err
		}
		t := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: streamRetries}
		if oh != nil {
			t.OAuthHandler = oh
		}
		return t, nil
	}
	return nil, fmt.Errorf("the MCP server %q has an unknown type %q; use \"stdio\", \"http\" or \"sse\"", s.name, s.cfg.Type)
}

// watch marks the server crashed when connection gen ends without Tally
// closing it.
func (s *server) watch(gen int, cs *sdk.ClientSession) {
	err := cs.Wait()
	detail := "the connection ended"
	if err != nil && !errors.Is(err, io.EOF) {
		detail = text.OneLine(err.Error(), 200)
	}
	s.ended(gen, detail)
}

// ended records that connection gen stopped; it does nothing when that
// connection was already replaced or closed on purpose.
func (s *server) ended(gen int, detail string) {
	s.mu.Lock()
	if s.gen != gen || s.state != StateConnected {
		s.mu.Unlock()
		return
	}
	s.cs = nil
	// Claim the end, in its final state: the watcher and a failing call
	// may both report it; only the first is recorded (the other returns
	// above), and both read the same state at once.
	restarts := s.restarts
	s.state = StateFailed
	if restarts < maxRestarts {
		s.state = StateCrashed
	}
	s.mu.Unlock()
	msg := fmt.Sprintf("the MCP server %q stopped (%s)", s.name, detail)
	if last := s.lastWords(); last != "" {
		msg += fmt.Sprintf(", its last error output was %q", last)
	}
	// A call may have restarted the server while the last words were
	// awaited: then this end is old news and must not mark it down.
	if restarts < maxRestarts {
		s.setStateOf(gen, StateCrashed, msg+"; it will be restarted once on the next call")
		return
	}
	s.setStateOf(gen, StateFailed, msg+" again after a restart; "+s.advice())
}

// stderrGrace is how long a stopped stdio server's last error output may
// take to reach its log after the connection ended.
const stderrGrace = time.Second

// lastWords is the last line the server wrote to its error output. A
// stdio server's dying words can reach the log a moment after its
// connection ended, so for one it waits up to stderrGrace for a line.
func (s *server) lastWords() string {
	last := s.log.LastLine()
	for deadline := time.Now().Add(stderrGrace); last == "" && s.cfg.Command != "" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		last = s.log.LastLine()
	}
	return last
}

// session returns the live session, restarting a crashed server once.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, int, error) {
	s.mu.Lock()
	cs, gen, st := s.cs, s.gen, s.state
	s.mu.Unlock()
	if st == StateConnected && cs != nil {
		return cs, gen, nil
	}
	var reason string
	s.connMu.Lock()
	defer s.connMu.Unlock()
	s.mu.Lock()
	cs, gen, st, reason = s.cs, s.gen, s.state, s.reason
	if st == StateCrashed && s.restarts < maxRestarts {
		s.restarts++
		s.mu.Unlock()
		infos, err := s.connectLocked(ctx)
		if err != nil {
			return nil, 0, err
		}
		s.m.addTools(s, infos)
		s.mu.Lock()
		cs, gen = s.cs, s.gen
		s.mu.Unlock()
		return cs, gen, nil
	}
	s.mu.Unlock()
	if st == StateConnected && cs != nil {
		return cs, gen, nil
	}
	switch st {
	case StateDisabled:
		return nil, 0, fmt.Errorf("the MCP server %q is disabled; do not use its tools unless the user enables it", s.name)
	case StateIdle:
		return nil, 0, fmt.Errorf("the MCP server %q has not been started; continue without its tools", s.name)
	case StateStopped:
		return nil, 0, fmt.Errorf("the MCP server %q was stopped; continue without its tools", s.name)
	case StateUntrusted:
		return nil, 0, fmt.Errorf("the MCP server %q was not restarted because the workspace files it runs changed since the user trusted them; continue without its tools and tell the user", s.name)
	}
	if reason == "" {
		reason = fmt.Sprintf("the MCP server %q is not running", s.name)
	}
	return nil, 0, fmt.Errorf("%s; continue without its tools and tell the user", strings.TrimSuffix(reason, "."))
}

// closeSession closes the current session, if any, on purpose.
func (s *server) closeSession() {
	s.mu.Lock()
	cs := s.cs
	s.cs = nil
	s.gen++ // the watcher of the old session must not report a crash
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
}

// stop closes the server; a crashed server is not restarted after it.
func (s *server) stop() {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	s.closeSession()
	s.closeCallback()
	if st := s.status().State; st != StateDisabled && st != StateStopped {
		s.setState(StateStopped, "")
	}
	s.log.Close()
}

func (s *server) allowsReadOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allowRO
}

// childEnv returns the environment of a stdio server: the allow-listed
// basics of base (never a variable that looks like a secret, such as
// OPENAI_API_KEY) plus the configured variables, whose "${NAME}"
// references are expanded from Tally's environment (see expandRefs for
// a workspace's servers).
func childEnv(base []string, extra map[string]string, workspace bool) ([]string, error) {
	env := sandbox.Environ(base, windowsBasics)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := expandRefs(extra[k], workspace)
		if err != nil {
			return nil, err
		}
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
		env = append(env, k+"="+v)
	}
	if env == nil {
		env = []string{} // never nil: a nil Env would inherit everything
	}
	return env, nil
}

var refRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandRefs replaces "${NAME}" with the value of NAME in Tally's
// environment; other text, "$NAME" included, is kept as written. A
// workspace's configuration is the repository's, not the user's: it may
// name only the variables a command of the sandbox sees anyway
// (sandbox.Environ), never a secret such as OPENAI_API_KEY; naming another
// is an error that says so.
func expandRefs(v string, workspace bool) (string, error) {
	var refused string
	out := refRE.ReplaceAllStringFunc(v, func(m string) string {
		name := m[2 : len(m)-1]
		value := os.Getenv(name)
		if workspace && value != "" && len(sandbox.Environ([]string{name + "=" + value}, nil)) == 0 {
			refused = name
			return ""
		}
		return value
	})
	if refused != "" {
		return "", fmt.Errorf("the workspace's configuration asks for ${%s}, which a repository may not read from your environment; add the server to your own mcp.json (tally mcp add) to give it that variable", refused)
	}
	return out, nil
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip implements http.RoundTripper.
func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// redact replaces the secrets in s by markers.
func redact(s string) string {
	out, _ := secrets.Redact(s)
	return out
}
