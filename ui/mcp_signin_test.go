package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/extensions"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// protectedServer is an MCP server that refuses every request until the
// user signs in, with the metadata that tells a client where: the
// authorization page is never answered, as a user who has not finished.
func protectedServer(t *testing.T) string {
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "sign in first", http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		js(w, map[string]any{"resource": ts.URL + "/mcp", "authorization_servers": []string{ts.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		js(w, map[string]any{"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "code_challenge_methods_supported": []string{"S256"}, "response_types_supported": []string{"code"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		js(w, map[string]any{"client_id": "tally-test", "token_endpoint_auth_method": "none"})
	})
	return ts.URL + "/mcp"
}

// A session whose remote server asks for sign-in says so in a banner with
// Sign in; the sign-in dialog shows the authorization page's address and
// can be cancelled; Settings marks the server "Sign in needed".
func TestMCPServerThatNeedsSignInOffersIt(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("TALLY_KEYCHAIN", "off")
	t.Setenv("BROWSER", "true")
	if err := workbench.SaveMCPServer("remote", mcp.ServerConfig{URL: protectedServer(t)}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("banner %q; servers %+v", h.ui.banner.Text(), h.ui.live.sess.MCP().Status().Servers)
		}
	})
	h.waitFor("the sign-in banner", func() bool { return strings.Contains(h.ui.banner.Text(), "needs you to sign in") })
	st := h.ui.live.sess.MCP().Status()
	if len(st.SignIns()) != 1 || st.SignIns()[0].Name != "remote" || len(st.Problems()) != 0 {
		t.Fatalf("status %+v", st.Servers)
	}
	signIn := buttonIn(h.ui.banner, "Sign in")
	if signIn == nil {
		t.Fatal("the banner has no Sign in button")
	}
	test.Tap(signIn)
	h.waitFor("the sign-in dialog", func() bool { return h.overlayShows("this closes by itself") })
	h.waitFor("the authorization address", func() bool { return h.overlayShows("/authorize?") })
	if !h.overlayShows("code_challenge_method=S256") || !h.overlayShows("client_id=tally-test") {
		t.Fatal("the address shown is not the authorization page with PKCE")
	}
	test.Tap(buttonIn(h.ui.win.Canvas().Overlays().Top(), "Cancel"))
	h.waitFor("the end of the sign-in", func() bool { return !h.overlayShows("this closes by itself") })
	if !strings.Contains(h.ui.banner.Text(), "Could not sign in to remote") || !strings.Contains(h.ui.banner.Text(), "cancelled") {
		t.Fatalf("banner %q", h.ui.banner.Text())
	}

	h.ui.showMCPSettings()
	v := waitShown[*extensions.MCPServers](h, "the MCP servers dialog")
	h.waitFor("the list", func() bool { return fynetestShows(v, "remote  (yours)") })
	if buttonIn(v, "Sign in") == nil || buttonIn(v, "Sign out") != nil {
		t.Fatal("the settings row lacks Sign in, or offers Sign out with no sign-in kept")
	}
	if !fynetestShows(v, "Sign in needed") {
		t.Fatal("the settings row does not say the server needs a sign-in")
	}
}

// fynetestShows tells whether a label inside o contains s.
func fynetestShows(o fyne.CanvasObject, s string) bool {
	found := false
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if l, ok := c.(*widget.Label); ok && strings.Contains(l.Text, s) {
			found = true
		}
		return !found
	})
	return found
}
