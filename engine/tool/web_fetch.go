package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
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
		return errResult(name, errors.New("the session's Network switch is off, so no page can be fetched; ask the user to turn Network on, or work without the page"))
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
		client = &http.Client{CheckRedirect: checkRedirect}
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errResult(name, fmt.Errorf("%s did not answer within %s; try again later or work without it", u.Host, WebFetchTimeout))
		}
		return errResult(name, fmt.Errorf("%s could not be fetched (%v); check the address", u.Redacted(), err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, WebFetchMaxBytes+1))
	if err != nil {
		return errResult(name, fmt.Errorf("reading %s failed (%v); try again", u.Redacted(), err))
	}
	cut := len(body) > WebFetchMaxBytes
	if cut {
		body = body[:WebFetchMaxBytes]
	}
	if resp.StatusCode >= 400 {
		return errResult(name, fmt.Errorf("%s answered %s; check the address", resp.Request.URL.Redacted(), resp.Status))
	}
	out, err := pageText(resp.Header.Get("Content-Type"), body, resp.Request.URL)
	if err != nil {
		return errResult(name, err)
	}
	head := fmt.Sprintf("# %s\n(fetched from %s", resp.Request.URL.Redacted(), resp.Request.URL.Host)
	if cut {
		head += fmt.Sprintf("; the page was cut at %d MB", WebFetchMaxBytes>>20)
	}
	return Result{Content: head + ")\n\n" + out}
}

// checkRedirect follows at most webFetchRedirects redirects, to http(s).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= webFetchRedirects {
		return fmt.Errorf("more than %d redirects", webFetchRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("a redirect to %s, which is not http or https", req.URL.Scheme)
	}
	return nil
}

// pageText turns a page into what the model reads.
func pageText(contentType string, body []byte, from *url.URL) (string, error) {
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
		md, err := htmltomarkdown.ConvertString(strings.ToValidUTF8(string(body), "\uFFFD"),
			converter.WithDomain(from.Scheme+"://"+from.Host))
		if err != nil {
			return "", fmt.Errorf("the page's HTML could not be converted (%v); try its plain-text or raw version", err)
		}
		return strings.TrimSpace(md), nil
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/xml":
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	return "", fmt.Errorf("the page is %s (%d bytes), not text web_fetch can read; find an HTML or text version", mt, len(body))
}
