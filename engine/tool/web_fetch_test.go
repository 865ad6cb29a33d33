package tool

import (
	"context"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
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
	on := &Env{AllowNetwork: true, FetchLocal: true}

	res := fetch(t, on, srv.URL+"/old")
	if res.IsError || !strings.Contains(res.Content, "# Install") || !strings.Contains(res.Content, "Run `make`, then [next]("+srv.URL+"/next)") ||
		strings.Contains(res.Content, "evil()") || !strings.Contains(res.Content, "- one") || !strings.Contains(res.Content, srv.URL+"/doc") {
		t.Fatalf("html page:\n%s", res.Content)
	}
	if !strings.Contains(res.Content, "redirected from "+srv.URL+"/old") {
		t.Errorf("the result does not say where the page came from:\n%s", res.Content)
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

// TestWebFetchRefusesLocalAddressesAndRedactsBeforeConverting is the
// regression test for web_fetch following a redirect to loopback (the
// card showed only the first address) and for a token the HTML-to-Markdown
// conversion escaped past the redaction (ghp_… became ghp\_…). Here
// 127.0.0.2 stands for the local address and 127.0.0.1 for a remote one.
func TestWebFetchRefusesLocalAddressesAndRedactsBeforeConverting(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "::1", "169.254.169.254", "fe80::1", "0.0.0.0"} {
		if !isLocal(netip.MustParseAddr(a)) {
			t.Errorf("%s is not taken as local", a)
		}
	}
	if isLocal(netip.MustParseAddr("93.184.216.34")) {
		t.Error("a public address is taken as local")
	}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address here: %v", err)
	}
	inner := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("INTERNAL-METADATA"))
	})}}
	inner.Start()
	defer inner.Close()
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>key ghp_Z7q2LmX9vR4tB8nK1wE5yH3cJ6pS0dF2gA4u here</p>"))
			return
		}
		http.Redirect(w, r, inner.URL+"/latest/meta-data", http.StatusFound)
	}))
	defer outer.Close()
	real := isLocal
	isLocal = func(ip netip.Addr) bool { return ip == netip.MustParseAddr("127.0.0.2") }
	defer func() { isLocal = real }()

	on := &Env{AllowNetwork: true}
	for _, u := range []string{outer.URL + "/go", inner.URL + "/direct"} {
		res := fetch(t, on, u)
		if !res.IsError || strings.Contains(res.Content, "INTERNAL-METADATA") || !strings.Contains(res.Content, "loopback or link-local") {
			t.Errorf("%s: %+v", u, res)
		}
	}
	if res := fetch(t, &Env{AllowNetwork: true, FetchLocal: true}, outer.URL+"/go"); res.IsError || !strings.Contains(res.Content, "INTERNAL-METADATA") {
		t.Errorf("with local addresses allowed: %+v", res)
	}
	res := fetch(t, on, outer.URL+"/token")
	if res.IsError || strings.Contains(res.Content, "Z7q2LmX9vR4tB8nK1wE5") || res.Redacted == 0 {
		t.Errorf("the token survived the conversion: %+v", res)
	}
}

// FuzzPageText feeds pages to the conversion web_fetch uses: it never
// panics and always gives valid UTF-8, and nothing it keeps of an HTML
// page is a <script> the page held.
func FuzzPageText(f *testing.F) {
	for _, s := range []string{"<html><body><h1>T</h1><script>evil()</script><p>x <code>y</code></p></body></html>",
		"<p><a href=\"javascript:x\">l</a><img src=x onerror=y>", "<<<>>>&amp;&#0;", "\xff\xfe<b>"} {
		f.Add("text/html; charset=utf-8", []byte(s))
	}
	f.Add("text/plain", []byte("plain"))
	f.Add("", []byte("%PDF-1.4"))
	from, _ := url.Parse("https://example.test/doc")
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		out, err := pageText(contentType, body, from, func(s string) string { return s })
		if err != nil {
			return
		}
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from %q", body)
		}
		if mt, _, _ := mime.ParseMediaType(contentType); mt == "text/html" && strings.Contains(out, "<script") && !strings.Contains(string(body), "<script") {
			t.Fatalf("a <script> appeared from %q", body)
		}
	})
}

// TestWebFetchGoesThroughALocalProxy checks that refusing local addresses
// does not refuse the user's proxy on 127.0.0.1: the page behind it is
// fetched, while a page on a local address is still refused by name.
func TestWebFetchGoesThroughALocalProxy(t *testing.T) {
	var (
		mu    sync.Mutex // the handler runs on the server's goroutine
		asked []string
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.String()) // a forward proxy sees the absolute URL
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("PROXIED PAGE"))
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	w := webFetch{client: fetchClient(false, http.ProxyURL(pu))}
	env := &Env{AllowNetwork: true}
	res := w.Run(context.Background(), env, json.RawMessage(`{"url":"http://docs.example.test/guide"}`))
	if res.IsError || !strings.Contains(res.Content, "PROXIED PAGE") {
		t.Fatalf("through a local proxy: %+v", res)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "http://docs.example.test/guide" {
		t.Errorf("the proxy was asked for %v", asked)
	}
	mu.Unlock()
	if res := w.Run(context.Background(), env, json.RawMessage(`{"url":"http://127.0.0.1:9/x"}`)); !res.IsError || !strings.Contains(res.Content, "loopback or link-local") {
		t.Errorf("a local page through the proxy: %+v", res)
	}
}
