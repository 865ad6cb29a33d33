package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/tally-dev/tally/internal/keychain"
)

// This file keeps the OAuth 2.1 grants of HTTP servers. Signing in (the
// browser, the loopback redirect) is in signin.go; the protocol itself —
// metadata discovery, client registration, PKCE, scopes, step-up, token
// endpoint authentication, refresh — is the SDK's auth package. A grant is
// kept in the keychain (package keychain), never in Tally's store, the
// transcript, a log or an export.

// StateSignIn is the state of an HTTP server that refused Tally until the
// user signs in (again): `tally mcp login NAME` or Settings' Sign in.
const StateSignIn State = "sign-in needed"

// OAuthConfig tunes signing in to an HTTP server that requires OAuth. The
// zero value is what most servers need: Tally identifies itself with
// ClientMetadataURL when set and the authorization server accepts client
// ID metadata documents, and registers itself dynamically otherwise.
type OAuthConfig struct {
	// ClientID and ClientSecret name a client registered beforehand with
	// the server's authorization server; a secret "${NAME}" is taken from
	// Tally's environment.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// ClientMetadataURL is an https URL serving Tally's client ID
	// metadata document.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// CallbackPort fixes the loopback port of the redirect (for a client
	// registered with one redirect URL); 0 picks a free port.
	CallbackPort int `json:"callbackPort,omitempty"`
	// Scopes, when set, replaces the scopes the server asks for.
	Scopes []string `json:"scopes,omitempty"`
}

// grant is what a sign-in leaves: the client it was made with and the
// token, so a session can use and refresh it without signing in again.
type grant struct {
	URL          string           `json:"url"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	// Wanted are the scopes a server asked for in a session (step-up):
	// the next sign-in asks for them too, afresh.
	Wanted []string `json:"wanted,omitempty"`
}

func (g *grant) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: g.ClientID, ClientSecret: g.ClientSecret, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: g.AuthStyle},
	}
}

// grantKey names the grant of server name at url in the keychain: a
// server whose URL changed signs in again.
func grantKey(name, url string) string { return "mcp:" + name + "@" + url }

// grants reads and writes the grants of one server.
type grants struct {
	store *keychain.Store
	key   string
	url   string
	mu    sync.Mutex
	last  string // the access token saved last
}

func (o *Options) grants(name, url string) (*grants, error) {
	st := o.Tokens
	if st == nil {
		var err error
		if st, err = keychain.Default(); err != nil {
			return nil, err
		}
	}
	return &grants{store: st, key: grantKey(name, url), url: url}, nil
}

// load returns the kept grant, or nil when there is none.
func (g *grants) load() (*grant, error) {
	raw, err := g.store.Get(g.key)
	if errors.Is(err, keychain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var gr grant
	if err := json.Unmarshal([]byte(raw), &gr); err != nil || gr.Token == nil || gr.URL != g.url {
		return nil, nil // unreadable or for another URL: sign in again
	}
	return &gr, nil
}

func (g *grants) save(gr *grant) error {
	data, err := json.Marshal(gr)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.store.Set(g.key, string(data)); err != nil {
		return err
	}
	g.last = gr.Token.AccessToken
	return nil
}

func (g *grants) remove() error { return g.store.Delete(g.key) }

// source is a token source over gr that keeps every new token (a refresh)
// in the keychain.
func (g *grants) source(ctx context.Context, gr *grant) oauth2.TokenSource {
	g.mu.Lock()
	g.last = gr.Token.AccessToken
	g.mu.Unlock()
	return &keptSource{g: g, gr: *gr, base: gr.config().TokenSource(ctx, gr.Token)}
}

type keptSource struct {
	g    *grants
	gr   grant
	base oauth2.TokenSource
}

func (k *keptSource) Token() (*oauth2.Token, error) {
	t, err := k.base.Token()
	if err != nil {
		return nil, err
	}
	k.g.mu.Lock()
	changed := t.AccessToken != k.g.last
	k.g.mu.Unlock()
	if changed {
		gr := k.gr
		gr.Token = t
		_ = k.g.save(&gr) // a token that cannot be kept still works now
	}
	return t, nil
}

// keptAuth is the OAuth handler of a server in a session: it sends the
// kept token (refreshing it when it expired) and, when the server refuses
// it, records that the user must sign in rather than opening a browser
// nobody asked for.
type keptAuth struct {
	ts     oauth2.TokenSource
	needed atomic.Bool
	g      *grants
	gr     *grant // the kept grant; nil when there is none
}

// errSignIn is the error of a request the server refused for want of a
// sign-in.
var errSignIn = errors.New("the server needs you to sign in")

func (k *keptAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return k.ts, nil }

func (k *keptAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	more, stepUp := insufficientScope(resp)
	if resp.StatusCode == http.StatusForbidden && !stepUp {
		return nil // forbidden for another reason: the retry reports it
	}
	if stepUp && k.gr != nil && k.g != nil {
		gr := *k.gr
		gr.Wanted = union(gr.Scopes, more)
		_ = k.g.save(&gr) // the next sign-in asks for them; without, it asks for the server's usual ones
	}
	k.needed.Store(true)
	return errSignIn
}

// insufficientScope tells whether a 403 asks for more scopes (step-up),
// and which.
func insufficientScope(resp *http.Response) (scopes []string, ok bool) {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return strings.Fields(c.Params["scope"]), true
		}
	}
	return nil, false
}

// union is a followed by the elements of b it lacks.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// keptHandler builds the session handler of server s from its kept grant.
func (s *server) keptHandler(ctx context.Context) (*keptAuth, error) {
	g, err := s.m.opts.grants(s.name, s.cfg.URL)
	if err != nil {
		return nil, err
	}
	k := &keptAuth{g: g}
	gr, err := g.load()
	if err != nil {
		return nil, fmt.Errorf("the sign-in of the MCP server %q cannot be read (%w)", s.name, err)
	}
	if gr != nil {
		k.gr = gr
		k.ts = g.source(ctx, gr)
	}
	return k, nil
}

// newSignInHandler is the SDK's authorization-code handler for server
// name: it starts from the kept token source initial (nil for none),
// registers or identifies Tally as cfg says, asks fetch for the code
// (with the scopes want besides those the server names), and keeps the
// grant it ends with in g.
func newSignInHandler(cfg *OAuthConfig, workspace bool, redirect string, fetch auth.AuthorizationCodeFetcher, g *grants, initial oauth2.TokenSource, want []string, client *http.Client) (*auth.AuthorizationCodeHandler, error) {
	if cfg == nil {
		cfg = &OAuthConfig{}
	}
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
		Client:                   client,
		InitialTokenSource:       initial,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:            []string{redirect},
				ClientName:              "Tally",
				TokenEndpointAuthMethod: "none",
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
			},
		},
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			gr := &grant{
				URL: g.url, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
				AuthURL: oc.Endpoint.AuthURL, TokenURL: oc.Endpoint.TokenURL, AuthStyle: oc.Endpoint.AuthStyle,
				Scopes: oc.Scopes, Token: t,
			}
			if err := g.save(gr); err != nil {
				return nil, fmt.Errorf("the sign-in worked but could not be kept (%w)", err)
			}
			return g.source(ctx, gr), nil
		},
	}
	if cfg.ClientMetadataURL != "" {
		hc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		hc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		secret, err := expandRefs(cfg.ClientSecret, workspace)
		if err != nil {
			return nil, err
		}
		if secret != "" {
			hc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
		}
		hc.DynamicClientRegistrationConfig = nil
	}
	switch {
	case len(cfg.Scopes) > 0:
		scopes := union(cfg.Scopes, want)
		hc.ScopeFilter = func([]string) []string { return scopes }
	case len(want) > 0:
		hc.ScopeFilter = func(found []string) []string { return union(found, want) }
	}
	return auth.NewAuthorizationCodeHandler(hc)
}

// legacyIssuer lets a server of the 2025-03-26 protocol, which serves its
// authorization metadata at the root of its own host, name an issuer with
// a path on that same host (https://host/oauth for https://host): that
// protocol made the server's host the authorization server and asked for
// no issuer match. The metadata is then taken as the host's. An issuer on
// another host is left as it is, so the SDK still refuses it.
type legacyIssuer struct{ base http.RoundTripper }

// legacyMetadataPath is where a 2025-03-26 server serves its metadata.
const legacyMetadataPath = "/.well-known/oauth-authorization-server"

func (l legacyIssuer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || req.URL.Path != legacyMetadataPath || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var meta map[string]any
	if json.Unmarshal(body, &meta) == nil {
		origin := req.URL.Scheme + "://" + req.URL.Host
		if iss, ok := meta["issuer"].(string); ok && iss != origin && strings.HasPrefix(iss, origin+"/") {
			meta["issuer"] = origin
			if fixed, err := json.Marshal(meta); err == nil {
				body = fixed
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}
