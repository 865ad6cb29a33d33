package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/tally-dev/tally/internal/text"
)

//go:embed web_fetch.md
var webFetchDoc string

// WebFetchParams are the arguments of web_fetch.
type WebFetchParams struct {
	URL string `json:"url"`
}

// Limits of web_fetch.
const (
	WebFetchMaxBytes  = 2 << 20 // bytes of a page read
	WebFetchTimeout   = 30 * time.Second
	webFetchRedirects = 5
)

var webFetchSpec = Spec{
	Name:        "web_fetch",
	Description: strings.TrimSpace(webFetchDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"url": {"type": "string", "description": "The page's address, http:// or https://."}
		},
		"required": ["url"],
		"additionalProperties": false
	}`),
}

type webFetch struct{ client *http.Client }

// WebFetch returns the web_fetch tool: it GETs an http(s) page, at most
// WebFetchMaxBytes within WebFetchTimeout (following up to 5 redirects,
// to http(s) only), and returns HTML as Markdown and text as it is. It
// needs approval (a network effect, see Effect) and refuses to run
// while Env.AllowNetwork is off.
func WebFetch() Tool { return webFetch{} }

func (webFetch) Spec() Spec          { return webFetchSpec }
func (webFetch) NeedsApproval() bool { return true }

// Effect reports that web_fetch reaches the network itself, outside the
// command sandbox: it asks outside full-auto mode.
func (webFetch) Effect() Effect { return EffectExternal }

func (w webFetch) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "web_fetch"
	var p WebFetchParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	u, err := url.Parse(strings.TrimSpace(p.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errResult(name, fmt.Errorf("%q is not an http:// or https:// address; give the page's full address", text.Clip(p.URL, 200)))
	}
	if env == nil || !env.AllowNetwork {
		return errResult(name, errors.New("the session's Network switch is off, so no page can be fetched; ask the user to turn Network on (the Network box in the app, tally run --network on), or work without the page"))
	}
	ctx, cancel := context.WithTimeout(ctx, WebFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errResult(name, err)
	}
	req.Header.Set("User-Agent", "Tally (web_fetch)")
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.1")
	client := w.client
	if client == nil {
		client = fetchClient(env.FetchLocal, http.ProxyFromEnvironment)
	}
	if !env.FetchLocal {
		if err := refuseLocal(ctx, u); err != nil {
			return errResult(name, err)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, errLocalAddress) {
			return errResult(name, err)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errResult(name, fmt.Errorf("%s did not answer within %s; try again later or work without it", u.Host, WebFetchTimeout))
		}
		return errResult(name, fmt.Errorf("%s could not be fetched (%w); check the address", u.Redacted(), err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, WebFetchMaxBytes+1))
	if err != nil {
		return errResult(name, fmt.Errorf("reading %s failed (%w); try again", u.Redacted(), err))
	}
	cut := len(body) > WebFetchMaxBytes
	if cut {
		body = body[:WebFetchMaxBytes]
	}
	if resp.StatusCode >= 400 {
		return errResult(name, fmt.Errorf("%s answered %s; check the address", resp.Request.URL.Redacted(), resp.Status))
	}
	var res Result
	out, err := pageText(resp.Header.Get("Content-Type"), body, resp.Request.URL, res.redact)
	if err != nil {
		return errResult(name, err)
	}
	final := resp.Request.URL
	head := fmt.Sprintf("# %s\n(fetched from %s", final.Redacted(), final.Host)
	if final.String() != u.String() {
		// The card showed the address asked for; the page came from here.
		head += "; redirected from " + u.Redacted()
	}
	if cut {
		head += fmt.Sprintf("; the page was cut at %d MB", WebFetchMaxBytes>>20)
	}
	res.Content = head + ")\n\n" + out
	return res
}

// errLocalAddress is matched by the error for a page on a loopback or
// link-local address while Env.FetchLocal is off.
var errLocalAddress = errors.New("a loopback or link-local address")

// fetchClient is web_fetch's client, reaching pages through the proxy
// proxy names: at most webFetchRedirects redirects, to http(s) only, and
// without local, never to a loopback or link-local address (this
// machine's services, a cloud's metadata service), checked by name before
// each request and by address at each connection, so a name that changes
// its answer cannot get past. The proxy itself may be local (a proxy on
// 127.0.0.1): a connection to it is not refused, and the names of the
// pages behind it are still checked.
func fetchClient(local bool, proxy func(*http.Request) (*url.URL, error)) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	plain := &net.Dialer{Timeout: WebFetchTimeout}
	tr.Proxy, tr.DialContext = proxy, plain.DialContext
	if !local {
		var mu sync.Mutex
		proxies := map[string]bool{} // host:port of the proxies requests went through
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			u, err := proxy(r)
			if u != nil {
				mu.Lock()
				proxies[proxyAddr(u)] = true
				mu.Unlock()
			}
			return u, err
		}
		checked := &net.Dialer{Timeout: WebFetchTimeout, Control: func(_, address string, _ syscall.RawConn) error {
			host, _, _ := net.SplitHostPort(address)
			if ip, err := netip.ParseAddr(host); err == nil && isLocal(ip) {
				return localError(host)
			}
			return nil
		}}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			toProxy := proxies[addr]
			mu.Unlock()
			if toProxy {
				return plain.DialContext(ctx, network, addr)
			}
			return checked.DialContext(ctx, network, addr)
		}
	}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= webFetchRedirects {
			return fmt.Errorf("more than %d redirects", webFetchRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %s, which is not http or https", req.URL.Scheme)
		}
		if !local {
			return refuseLocal(req.Context(), req.URL)
		}
		return nil
	}}
}

// proxyAddr is the host:port the transport dials for the proxy u.
func proxyAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	return net.JoinHostPort(u.Hostname(), port)
}

// refuseLocal returns an error when u's host is, or resolves to, a
// loopback or link-local address.
func refuseLocal(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if isLocal(ip) {
			return localError(host)
		}
		return nil
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return localError(host)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // the request fails the same way and says so
	}
	for _, ip := range ips {
		if isLocal(ip) {
			return localError(host)
		}
	}
	return nil
}

// isLocal reports an address web_fetch refuses without Env.FetchLocal; a
// variable so that a test can stand one loopback address for a remote one.
var isLocal = func(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsUnspecified()
}

func localError(host string) error {
	return fmt.Errorf("web_fetch refuses %s, %w (this machine or its network's metadata service); if that page is meant, the user can turn on Local pages in Settings (tally run --fetch-local)", host, errLocalAddress)
}

// pageText turns a page into what the model reads. HTML is redacted
// before it is converted (the conversion escapes characters, which would
// hide a token such as ghp_… from the rules) as well as after, at intake.
func pageText(contentType string, body []byte, from *url.URL, redact func(string) string) (string, error) {
	mt, params, _ := mime.ParseMediaType(contentType)
	if mt == "" {
		mt = http.DetectContentType(body)
		mt, params, _ = mime.ParseMediaType(mt)
	}
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" && !utf8.Valid(body) {
		return "", fmt.Errorf("the page is in the character set %s, which web_fetch does not convert; find a UTF-8 version", cs)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		md, err := htmltomarkdown.ConvertString(redact(strings.ToValidUTF8(string(body), "\uFFFD")),
			converter.WithDomain(from.Scheme+"://"+from.Host))
		if err != nil {
			return "", fmt.Errorf("the page's HTML could not be converted (%w); try its plain-text or raw version", err)
		}
		return strings.TrimSpace(md), nil
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/xml":
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	return "", fmt.Errorf("the page is %s (%d bytes), not text web_fetch can read; find an HTML or text version", mt, len(body))
}
