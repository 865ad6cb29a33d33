package mcp

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/internal/text"
)

// This file reads URL-mode elicitation (SEP-1036): a server asks the user
// to open a page in their browser, for a step that must not pass through
// the client (signing in to a third party, a payment, an API key). The
// request reaches the host as a [Form] with a URL and no fields. The host
// shows the whole URL and its host name and never opens it by itself:
// accepting means the user chose to open it. Only https pages are taken,
// and http ones on a loopback address (a server on the same machine).

// maxPageURL bounds the length of a page's URL.
const maxPageURL = 4096

// Page reports whether f asks the user to open a page (URL mode) rather
// than to fill in fields.
func (f Form) Page() bool { return f.URL != "" }

// Host is the host name of a page's URL, which the user should check
// before opening it; "" for a form.
func (f Form) Host() string {
	u, err := url.Parse(f.URL)
	if err != nil || f.URL == "" {
		return ""
	}
	return u.Hostname()
}

// parsePage turns a URL-mode request into a Form, or says in one sentence
// why it cannot be shown.
func parsePage(server string, p *sdk.ElicitParams) (Form, error) {
	if p.URL == "" {
		return Form{}, fmt.Errorf("the URL-mode request has no url; send the page to open")
	}
	if err := checkPageURL(p.URL); err != nil {
		return Form{}, err
	}
	return Form{Server: server, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}, nil
}

// checkPageURL accepts an absolute https URL, or http on a loopback
// address, with no user name or password in it.
func checkPageURL(raw string) error {
	if len(raw) > maxPageURL {
		return fmt.Errorf("the page's URL is %d bytes long, more than the %d Tally shows; send a shorter one", len(raw), maxPageURL)
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("the page's URL has control characters in it; send a clean one")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the page's URL %q is not an absolute URL; send one like https://example.com/step", text.Clip(raw, 80))
	}
	if u.User != nil {
		return fmt.Errorf("the page's URL carries a user name or password; send it without them")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("the page's URL %q is not https; Tally opens only https pages (or http on this machine)", text.Clip(raw, 80))
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pageDone notes a server's notifications/elicitation/complete: the step
// the user was sent to a page for is done, which a call waiting for it
// (see pagesFirst) learns.
func (s *server) pageDone(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	id := req.Params.ElicitationID
	s.log.Note(fmt.Sprintf("the server says the page it asked to be opened (%s) is done with", text.OneLine(id, 60)))
	s.mu.Lock()
	if ch, ok := s.pages[id]; ok {
		close(ch)
		delete(s.pages, id)
	}
	s.mu.Unlock()
}
