package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/tally-dev/tally/internal/keychain"
)

// fakeAuth is an OAuth 2.1 authorization server and a protected MCP
// server in one: dynamic registration, an authorization page that
// answers at once (as a user who clicks Allow), PKCE-checked code
// exchange, refresh, and tokens that expire after ttl.
type fakeAuth struct {
	url string
	ttl time.Duration

	mu        sync.Mutex
	codes     map[string]string    // code → PKCE challenge
	tokens    map[string]time.Time // access token → expiry
	scopes    map[string]string    // code, then access token → the scopes granted
	needAdmin bool                 // requests need the scope "admin" (step-up)
	refreshes int
	issued    int
	registers int
	lastAuth  url.Values
}

func newFakeAuth(t *testing.T, ttl time.Duration) *fakeAuth {
	t.Helper()
	f := &fakeAuth{ttl: ttl, codes: map[string]string{}, tokens: map[string]time.Time{}, scopes: map[string]string{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	addBasicTools(s, nil)
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	f.url = ts.URL
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		exp, ok := f.tokens[tok]
		if !ok || time.Now().After(exp) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: exp}, nil
	}
	stepUp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		refuse := f.needAdmin && !strings.Contains(f.scopes[tok], "admin")
		f.mu.Unlock()
		if refuse {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tools admin", resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "more scopes needed", http.StatusForbidden)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource/mcp",
	})(stepUp))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: ts.URL + "/mcp", AuthorizationServers: []string{ts.URL}, ScopesSupported: []string{"tools"},
	}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported": []string{"tools", "offline_access"}, "response_types_supported": []string{"code"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var meta map[string]any
		_ = json.NewDecoder(r.Body).Decode(&meta)
		f.mu.Lock()
		f.registers++
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "client-1", "redirect_uris": meta["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := fmt.Sprintf("code-%d", time.Now().UnixNano())
		f.mu.Lock()
		f.codes[code] = q.Get("code_challenge")
		f.scopes[code] = q.Get("scope")
		f.lastAuth = q
		f.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		defer f.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			challenge, ok := f.codes[r.Form.Get("code")]
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(f.codes, r.Form.Get("code"))
			f.scopes["refresh-secret"] = f.scopes[r.Form.Get("code")]
		case "refresh_token":
			if r.Form.Get("refresh_token") != "refresh-secret" {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"error": "invalid_grant"})
				return
			}
			f.refreshes++
		default:
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.issued++
		tok := fmt.Sprintf("access-secret-%d", f.issued)
		f.tokens[tok] = time.Now().Add(f.ttl)
		f.scopes[tok] = f.scopes["refresh-secret"]
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(f.ttl.Seconds()), "refresh_token": "refresh-secret"})
	})
	return f
}

// sameSet tells whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// follow is a browser whose user allows at once: it requests the page and
// follows the redirects, which end at Tally's loopback address.
func follow(t *testing.T, shown *[]string) func(string) error {
	return func(u string) error {
		*shown = append(*shown, u)
		resp, err := http.Get(u)
		if err != nil {
			t.Errorf("the browser could not follow %s: %v", u, err)
			return err
		}
		resp.Body.Close()
		return nil
	}
}

func TestOAuthSignInKeepsTheGrantAndSessionsUseIt(t *testing.T) {
	f := newFakeAuth(t, time.Hour)
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	store := keychain.InFile(creds)
	logs := t.TempDir()
	sc := ServerConfig{URL: f.url + "/mcp"}
	opts := Options{Tokens: store, LogPath: func(s string) string { return filepath.Join(logs, s+".log") }}

	// Before signing in, a session's server waits for the user.
	m := newManager(t, map[string]ServerConfig{"remote": sc}, opts)
	err := m.Connect(context.Background(), "remote")
	st := status(t, m, "remote")
	if err == nil || st.State != StateSignIn || !strings.Contains(st.Reason, "tally mcp login remote") {
		t.Fatalf("before sign-in: err %v, status %+v", err, st)
	}
	m.Close()

	var shown []string
	signIn := opts
	signIn.Browse = follow(t, &shown)
	fresh, err := SignIn(context.Background(), "remote", sc, signIn)
	if err != nil || !fresh {
		t.Fatalf("SignIn = %v, %v", fresh, err)
	}
	if len(shown) != 1 || !strings.Contains(shown[0], "code_challenge_method=S256") || !strings.Contains(shown[0], "resource=") {
		t.Fatalf("the authorization page %q lacks PKCE or the resource", shown)
	}
	// The SDK joins the scopes through a map, so their order varies.
	if got := strings.Fields(f.lastAuth.Get("scope")); !sameSet(got, []string{"tools", "offline_access"}) {
		t.Errorf("scopes asked for = %q, want the server's and offline_access", got)
	}
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, %v", fi, err)
	}

	// A session now connects with the kept grant and calls tools.
	m = newManager(t, map[string]ServerConfig{"remote": sc}, opts)
	if err := m.Connect(context.Background(), "remote"); err != nil {
		t.Fatal(err)
	}
	if out, isErr := run(t, m, "mcp__remote__echo", `{"text":"hi"}`); isErr || !strings.Contains(out, "hi") {
		t.Fatalf("call = %q, %v", out, isErr)
	}
	m.Close()

	// Signing in again while the grant works changes nothing.
	if fresh, err := SignIn(context.Background(), "remote", sc, signIn); err != nil || fresh {
		t.Fatalf("second SignIn = %v, %v; want no new sign-in", fresh, err)
	}
	if f.registers != 1 {
		t.Errorf("registered %d times, want 1", f.registers)
	}

	// No token is written anywhere but the credentials file.
	for _, d := range []string{logs} {
		_ = filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				data, _ := os.ReadFile(p)
				if strings.Contains(string(data), "secret") {
					t.Errorf("%s holds a token: %q", p, data)
				}
			}
			return nil
		})
	}

	if had, err := SignOut("remote", sc, opts); err != nil || !had {
		t.Fatalf("SignOut = %v, %v", had, err)
	}
	if SignedIn("remote", sc, opts) {
		t.Fatal("still signed in after SignOut")
	}
	m = newManager(t, map[string]ServerConfig{"remote": sc}, opts)
	if err := m.Connect(context.Background(), "remote"); err == nil || status(t, m, "remote").State != StateSignIn {
		t.Fatalf("after sign-out: %v, %+v", err, status(t, m, "remote"))
	}
}

func TestOAuthExpiredTokenIsRefreshedAndKept(t *testing.T) {
	f := newFakeAuth(t, 2*time.Second)
	store := keychain.InFile(filepath.Join(t.TempDir(), "credentials.json"))
	sc := ServerConfig{URL: f.url + "/mcp"}
	var shown []string
	if _, err := SignIn(context.Background(), "remote", sc, Options{Tokens: store, Browse: follow(t, &shown)}); err != nil {
		t.Fatal(err)
	}
	before, _ := store.Get(grantKey("remote", sc.URL))
	time.Sleep(2500 * time.Millisecond) // the access token expires; oauth2 refreshes 10 s early anyway
	m := newManager(t, map[string]ServerConfig{"remote": sc}, Options{Tokens: store})
	if err := m.Connect(context.Background(), "remote"); err != nil {
		t.Fatal(err)
	}
	if f.refreshes == 0 {
		t.Fatal("the expired token was not refreshed")
	}
	after, _ := store.Get(grantKey("remote", sc.URL))
	if before == after || !strings.Contains(after, "access-secret-") || !strings.Contains(after, "refresh-secret") {
		t.Fatalf("the refreshed token was not kept: %s", after)
	}
}

func TestOAuthSettingsAreChecked(t *testing.T) {
	for _, c := range []struct {
		sc   ServerConfig
		want string
	}{
		{ServerConfig{Command: "x", OAuth: &OAuthConfig{ClientID: "a"}}, "no use"},
		{ServerConfig{URL: "https://x/mcp", OAuth: &OAuthConfig{ClientSecret: "s"}}, "no client ID"},
		{ServerConfig{URL: "https://x/mcp", OAuth: &OAuthConfig{CallbackPort: 70000}}, "not a port"},
		{ServerConfig{URL: "https://x/mcp", OAuth: &OAuthConfig{ClientMetadataURL: "http://x/doc.json"}}, "https address"},
	} {
		if err := c.sc.Validate("s"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.sc.OAuth, err, c.want)
		}
	}
	if _, err := SignIn(context.Background(), "local", ServerConfig{Command: "x"}, Options{Browse: func(string) error { return nil }}); err == nil || !strings.Contains(err.Error(), "needs no sign-in") {
		t.Fatalf("SignIn of a stdio server = %v", err)
	}
}

func TestOAuthStepUpInASessionAsksTheNextSignInForTheScopes(t *testing.T) {
	f := newFakeAuth(t, time.Hour)
	store := keychain.InFile(filepath.Join(t.TempDir(), "credentials.json"))
	sc := ServerConfig{URL: f.url + "/mcp"}
	var shown []string
	signIn := Options{Tokens: store, Browse: follow(t, &shown)}
	if _, err := SignIn(context.Background(), "remote", sc, signIn); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.needAdmin = true
	f.mu.Unlock()
	m := newManager(t, map[string]ServerConfig{"remote": sc}, Options{Tokens: store})
	if err := m.Connect(context.Background(), "remote"); err == nil || status(t, m, "remote").State != StateSignIn {
		t.Fatalf("a server asking for more scopes: %v, %+v", err, status(t, m, "remote"))
	}
	m.Close()
	fresh, err := SignIn(context.Background(), "remote", sc, signIn)
	if err != nil || !fresh {
		t.Fatalf("SignIn after a step-up = %v, %v; want a new sign-in", fresh, err)
	}
	if got := f.lastAuth.Get("scope"); !strings.Contains(got, "admin") || !strings.Contains(got, "tools") {
		t.Fatalf("the new sign-in asked for %q, want the old scopes and admin", got)
	}
	m = newManager(t, map[string]ServerConfig{"remote": sc}, Options{Tokens: store})
	if err := m.Connect(context.Background(), "remote"); err != nil {
		t.Fatalf("after the step-up sign-in: %v", err)
	}
}
