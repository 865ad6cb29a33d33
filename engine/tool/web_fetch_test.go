package tool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func fetch(t *testing.T, env *Env, url string) Result {
	t.Helper()
	args, _ := json.Marshal(WebFetchParams{URL: url})
	return WebFetch().Run(context.Background(), env, args)
}

func TestWebFetchConvertsHTMLAndObeysTheNetworkSwitch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title>T</title><script>evil()</script></head><body><h1>Install</h1><p>Run <code>make</code>, then <a href="/next">next</a>.</p><ul><li>one</li></ul></body></html>`))
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/doc", http.StatusFound) })
	mux.HandleFunc("/plain", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("just text"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("x", WebFetchMaxBytes+100)))
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2})
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "ftp://x/y", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	on := &Env{AllowNetwork: true}

	res := fetch(t, on, srv.URL+"/old")
	if res.IsError || !strings.Contains(res.Content, "# Install") || !strings.Contains(res.Content, "Run `make`, then [next]("+srv.URL+"/next)") ||
		strings.Contains(res.Content, "evil()") || !strings.Contains(res.Content, "- one") || !strings.Contains(res.Content, srv.URL+"/doc") {
		t.Fatalf("html page:\n%s", res.Content)
	}
	if res := fetch(t, on, srv.URL+"/plain"); res.IsError || !strings.HasSuffix(res.Content, "just text") {
		t.Fatalf("plain: %+v", res)
	}
	if res := fetch(t, on, srv.URL+"/big"); res.IsError || !strings.Contains(res.Content, "cut at 2 MB") || len(res.Content) > WebFetchMaxBytes+500 {
		t.Fatalf("big: error %v, %d bytes", res.IsError, len(res.Content))
	}
	for path, want := range map[string]string{"/bin": "application/octet-stream", "/missing": "404", "/ftp": "not http or https"} {
		if res := fetch(t, on, srv.URL+path); !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %+v", path, res)
		}
	}
	if res := fetch(t, &Env{}, srv.URL+"/doc"); !res.IsError || !strings.Contains(res.Content, "Network switch is off") {
		t.Fatalf("network off: %+v", res)
	}
	if res := fetch(t, on, "file:///etc/passwd"); !res.IsError || !strings.Contains(res.Content, "not an http") {
		t.Fatalf("file URL: %+v", res)
	}
	if !WebFetch().NeedsApproval() || effectOf(WebFetch()) != EffectExternal {
		t.Fatal("web_fetch runs without asking")
	}
	if shown, ok := Display("web_fetch", json.RawMessage(`{"url":"https://example.com/a"}`)); !ok || !strings.Contains(shown, "fetch this page") {
		t.Fatalf("approval shows %q", shown)
	}
}
