package mcp

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// SignInWait bounds how long a sign-in waits for the user to finish on
// the authorization page.
const SignInWait = 5 * time.Minute

// callbackPath is the path of the loopback redirect.
const callbackPath = "/callback"

// callback is the loopback redirect Tally serves for the length of a
// sign-in: the authorization server sends the user's browser there with
// the code.
type callback struct {
	url     string
	srv     *http.Server
	results chan callbackResult
	used    atomic.Bool // a code was asked for: the user signed in
	once    sync.Once
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// listenCallback serves the redirect on 127.0.0.1:port (0 picks a free
// port).
func listenCallback(port int) (*callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("the sign-in cannot listen for its redirect on 127.0.0.1:%d (%w); free the port or change oauth.callbackPort", port, err)
	}
	c := &callback{
		url:     fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, callbackPath),
		results: make(chan callbackResult, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc(callbackPath, c.serve)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

func (c *callback) close() { c.once.Do(func() { _ = c.srv.Close() }) }

func (c *callback) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var out callbackResult
	switch {
	case q.Get("error") != "":
		detail := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			detail += ": " + d
		}
		out.err = fmt.Errorf("the authorization server refused the sign-in (%s)", detail)
	case q.Get("code") == "":
		http.Error(w, "This address only takes the answer of a sign-in.", http.StatusBadRequest)
		return
	default:
		out.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	select {
	case c.results <- out:
	default: // an answer is already waiting
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	msg := "You are signed in. You can close this page and go back to Tally."
	if out.err != nil {
		msg = "The sign-in did not work: " + out.err.Error() + ". Go back to Tally and try again."
	}
	fmt.Fprintf(w, "<!doctype html><title>Tally sign-in</title><p style=\"font:16px sans-serif;margin:3em\">%s</p>", html.EscapeString(msg))
}

// fetcher asks the user, through browse, to open the authorization page
// and waits for the redirect.
func (c *callback) fetcher(browse func(string) error) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		c.used.Store(true)
		select {
		case <-c.results: // a stale answer of an earlier round
		default:
		}
		_ = browse(args.URL) // the page's address was shown; a browser that did not open is no failure
		wait := time.NewTimer(SignInWait)
		defer wait.Stop()
		select {
		case r := <-c.results:
			return r.res, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait.C:
			return nil, fmt.Errorf("the sign-in was not finished within %s; run it again", SignInWait)
		}
	}
}

// oauthHandler is the handler the HTTP transport of s authorises with, or
// nil when the server is reached with a fixed Authorization header. With
// Options.Browse set the server may sign in as it connects (for `tally
// mcp login` and `tally mcp call`); otherwise the kept grant is used and a
// refusal marks the server StateSignIn.
func (s *server) oauthHandler() (auth.OAuthHandler, error) {
	for k := range s.cfg.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return nil, nil
		}
	}
	kept, err := s.keptHandler(context.Background())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.kept = kept
	s.mu.Unlock()
	if s.m.opts.Browse == nil {
		return kept, nil
	}
	g, err := s.m.opts.grants(s.name, s.cfg.URL)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	cb := s.cb
	s.mu.Unlock()
	if cb == nil {
		port := 0
		if s.cfg.OAuth != nil {
			port = s.cfg.OAuth.CallbackPort
		}
		if cb, err = listenCallback(port); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.cb = cb
		s.mu.Unlock()
	}
	// A server that asked a session for more scopes is signed in to
	// afresh, asking for them: the kept token would still open it.
	initial, want := kept.ts, []string(nil)
	if kept.gr != nil && len(kept.gr.Wanted) > 0 {
		initial, want = nil, kept.gr.Wanted
	}
	h, err := newSignInHandler(s.cfg.OAuth, s.cfg.Workspace, cb.url, cb.fetcher(s.m.opts.Browse), g, initial, want, &http.Client{Transport: legacyIssuer{base: http.DefaultTransport}})
	if err != nil {
		return nil, fmt.Errorf("the sign-in settings of the MCP server %q are not usable (%w); check its oauth settings", s.name, err)
	}
	return h, nil
}

// signInNeeded tells whether the server refused Tally for want of a
// sign-in since its handler was made.
func (s *server) signInNeeded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept != nil && s.m.opts.Browse == nil && s.kept.needed.Load()
}

// signInError is the reason of a server in StateSignIn.
func (s *server) signInError() error {
	return fmt.Errorf("the MCP server %q needs you to sign in; press Sign in in Settings or run `tally mcp login %s`", s.name, s.name)
}

// closeCallback ends the loopback redirect of a sign-in, if one is served.
func (s *server) closeCallback() {
	s.mu.Lock()
	cb := s.cb
	s.cb = nil
	s.mu.Unlock()
	if cb != nil {
		cb.close()
	}
}

// SignIn signs Tally in to the HTTP server name of sc: it connects, and
// when the server asks for authorization, it gives opts.Browse (which
// must be set) the authorization page to show the user, serves the
// loopback redirect until the user finished, and keeps the grant in the
// keychain. fresh is false when the server accepted Tally without a new
// sign-in (a kept grant still works, or it needs none).
func SignIn(ctx context.Context, name string, sc ServerConfig, opts Options) (fresh bool, err error) {
	if err := sc.Validate(name); err != nil {
		return false, err
	}
	if sc.Kind() == TypeStdio {
		return false, fmt.Errorf("the MCP server %q runs on this machine and needs no sign-in; sign-in is for servers reached by URL", name)
	}
	if opts.Browse == nil {
		return false, errors.New("signing in needs a way to show the authorization page; this is a bug in the caller")
	}
	sc.Disabled = false
	opts.OnActivate, opts.OnStatus = nil, nil
	if sc.ConnectTimeout() < SignInWait {
		sc.Timeout = SignInWait.Seconds()
	}
	m := NewManager(Config{Servers: map[string]ServerConfig{name: sc}}, opts)
	defer m.Close()
	err = m.Connect(ctx, name)
	s := m.servers[name]
	s.mu.Lock()
	cb := s.cb
	s.mu.Unlock()
	fresh = cb != nil && cb.used.Load()
	if err != nil {
		return fresh, err
	}
	return fresh, nil
}

// SignOut forgets the grant of server name of sc; had says whether there
// was one. The token is not revoked at the server.
func SignOut(name string, sc ServerConfig, opts Options) (had bool, err error) {
	g, err := opts.grants(name, sc.URL)
	if err != nil {
		return false, err
	}
	gr, err := g.load()
	if err != nil {
		return false, err
	}
	if err := g.remove(); err != nil {
		return false, err
	}
	return gr != nil, nil
}

// SignedIn tells whether a grant is kept for server name of sc.
func SignedIn(name string, sc ServerConfig, opts Options) bool {
	g, err := opts.grants(name, sc.URL)
	if err != nil {
		return false
	}
	gr, err := g.load()
	return err == nil && gr != nil
}
