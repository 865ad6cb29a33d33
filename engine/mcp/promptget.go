package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/internal/text"
)

// This file gets a prompt's text and reads a resource, for the slash
// commands and attachments of the prompt box. The text is the server's as
// it sent it, cut to a size cap; the caller redacts and neutralises it
// like any text from outside.

// Size caps of what a server's prompt or resource gives, in bytes.
const (
	maxPromptText   = 64 << 10
	maxResourceText = 64 << 10
)

// LookupPrompt returns the prompt name of server. It looks in the cached
// list first and, when the prompt is not there, lists that server again
// once (it may have added the prompt since). It never starts a server.
func (m *Manager) LookupPrompt(ctx context.Context, server, name string) (Prompt, bool) {
	s, ok := m.servers[server]
	if !ok {
		return Prompt{}, false
	}
	find := func(ps []Prompt) (Prompt, bool) {
		i := slices.IndexFunc(ps, func(p Prompt) bool { return p.Name == name })
		if i < 0 {
			return Prompt{}, false
		}
		return ps[i], true
	}
	ps, _ := s.lists(ctx, false)
	if p, ok := find(ps); ok {
		return p, true
	}
	ps, _ = s.lists(ctx, true)
	return find(ps)
}

// GetPrompt asks server for its prompt with the given arguments and
// returns the prompt's messages as one text: text content verbatim, an
// embedded text resource inlined under a line naming it, an image, audio
// or binary resource as a one-line placeholder naming its type and size.
// Messages are separated by a blank line, each preceded by its role when
// the prompt mixes roles. Text past maxPromptText bytes is cut with a note
// saying so. A crashed server is restarted once, as for a tool call; the
// call waits at most the server's timeout, never panics, and its error
// says in one sentence what went wrong and what to do.
func (m *Manager) GetPrompt(ctx context.Context, server, prompt string, args map[string]string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("the MCP client failed unexpectedly getting the prompt %q of %q (%v); try again", prompt, server, p)
		}
	}()
	s, cs, gen, err := m.userSession(ctx, server)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	res, err := cs.GetPrompt(cctx, &sdk.GetPromptParams{Name: prompt, Arguments: args})
	if err != nil {
		return "", s.requestError(ctx, cctx, gen, fmt.Sprintf("the prompt %q", prompt), err)
	}
	if res == nil || len(res.Messages) == 0 {
		return "", fmt.Errorf("the MCP server %q returned no messages for the prompt %q; check the prompt's arguments or ask the server's author", server, prompt)
	}
	return promptText(res.Messages), nil
}

// promptText renders a prompt's messages as one text (see GetPrompt).
func promptText(msgs []*sdk.PromptMessage) string {
	mixed := slices.ContainsFunc(msgs, func(m *sdk.PromptMessage) bool { return m != nil && m.Role != "" && m.Role != "user" })
	var parts []string
	for _, m := range msgs {
		if m == nil {
			continue
		}
		body := contentText(m.Content)
		if mixed {
			body = "[" + text.OneLine(string(m.Role), 20) + "]\n" + body
		}
		parts = append(parts, body)
	}
	return capText(strings.Join(parts, "\n\n"), maxPromptText, "the prompt's text")
}

// capText cuts s to at most limit bytes (on a rune boundary), ending it
// with a note saying what was cut.
func capText(s string, limit int, what string) string {
	if len(s) <= limit {
		return s
	}
	return text.ClipBytes(s, limit) + fmt.Sprintf("\n[%s was cut at %s of its %s bytes]", what, text.Thousands(limit), text.Thousands(len(s)))
}

// ResourceText is a resource read for an attachment.
type ResourceText struct {
	Server, URI string
	// MIMEType is the type of the first content, "" when unsaid.
	MIMEType string
	// Text is the resource's text: its text contents joined, binary parts
	// as one-line placeholders, cut to maxResourceText bytes with a note
	// at its end (Cut is then set).
	Text string
	// Size is the bytes of text the server returned, before any cut.
	Size int
	Cut  bool
}

// ReadResource reads the resource uri of server and returns its text. A
// resource that holds only binary content (an image, say) is refused with
// an error naming its type and size; a text resource longer than
// maxResourceText bytes is cut, with a note. Like GetPrompt it restarts a
// crashed server once, waits at most the server's timeout and never
// panics.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (out ResourceText, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = ResourceText{}, fmt.Errorf("the MCP client failed unexpectedly reading %q of %q (%v); try again", uri, server, p)
		}
	}()
	s, cs, gen, err := m.userSession(ctx, server)
	if err != nil {
		return ResourceText{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	res, err := cs.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return ResourceText{}, s.requestError(ctx, cctx, gen, fmt.Sprintf("the resource %q", uri), err)
	}
	return resourceText(server, uri, res)
}

// resourceText renders what ReadResource returned (see ReadResource).
func resourceText(server, uri string, res *sdk.ReadResourceResult) (ResourceText, error) {
	out := ResourceText{Server: server, URI: uri}
	var contents []*sdk.ResourceContents
	if res != nil {
		contents = slices.DeleteFunc(slices.Clone(res.Contents), func(c *sdk.ResourceContents) bool { return c == nil })
	}
	if len(contents) == 0 {
		return out, fmt.Errorf("the MCP server %q returned nothing for the resource %q; check the URI", server, uri)
	}
	out.MIMEType = text.OneLine(contents[0].MIMEType, 100)
	var parts []string
	binary, blobBytes := 0, 0
	for _, c := range contents {
		body, isText := contentsText(c)
		if !isText {
			binary++
			blobBytes += len(c.Blob)
		}
		if len(contents) > 1 {
			// Several parts (a folder's files, say): each under its URI.
			if isText {
				body = fmt.Sprintf("[%s, %s]\n%s", text.OneLine(c.URI, 300), orUnknown(c.MIMEType), body)
			}
		}
		parts = append(parts, body)
	}
	if binary == len(contents) {
		return out, fmt.Errorf("the resource %q of the MCP server %q is binary (%s, %s bytes); only text resources can be attached",
			uri, server, orUnknown(out.MIMEType), text.Thousands(blobBytes))
	}
	all := strings.Join(parts, "\n\n")
	out.Size = len(all)
	out.Text = capText(all, maxResourceText, "the resource")
	out.Cut = len(all) > maxResourceText
	return out, nil
}

// contentsText returns the text of one resource content and whether it is
// text: its text, or a blob that is valid UTF-8 of a textual type;
// otherwise a one-line placeholder.
func contentsText(c *sdk.ResourceContents) (string, bool) {
	if len(c.Blob) == 0 {
		return c.Text, true
	}
	if textual(c.MIMEType) && utf8.Valid(c.Blob) {
		return string(c.Blob), true
	}
	return fmt.Sprintf("[resource %s, %s, %s bytes, not shown]", text.OneLine(c.URI, 300), orUnknown(c.MIMEType), text.Thousands(len(c.Blob))), false
}

// textual reports whether a MIME type is text a person or model reads.
func textual(mt string) bool {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(t, "text/"):
		return true
	case strings.HasSuffix(t, "+json"), strings.HasSuffix(t, "+xml"):
		return true
	}
	switch t {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml",
		"application/toml", "application/javascript", "application/x-sh", "application/sql":
		return true
	}
	return false
}

// userSession returns the live session of server for a request the user
// made (a slash command, an attachment), with an error phrased for the
// user when the server is not there to ask.
func (m *Manager) userSession(ctx context.Context, name string) (*server, *sdk.ClientSession, int, error) {
	s, ok := m.servers[name]
	if !ok {
		return nil, nil, 0, fmt.Errorf("there is no MCP server %q; the servers are: %s", name, orNone(m.names))
	}
	st := s.status()
	switch st.State {
	case StateDisabled:
		return nil, nil, 0, fmt.Errorf("the MCP server %q is disabled; enable it in Settings and open the session again", name)
	case StateIdle:
		return nil, nil, 0, fmt.Errorf("the MCP server %q has not started yet; wait a moment and try again", name)
	case StateStopped:
		return nil, nil, 0, fmt.Errorf("the MCP server %q was stopped; open the session again to restart it", name)
	case StateUntrusted:
		return nil, nil, 0, fmt.Errorf("the MCP server %q is not running because the workspace files it runs changed since they were trusted; review them and trust the workspace's MCP file again", name)
	case StateFailed:
		reason := strings.TrimSuffix(cmp.Or(st.Reason, "it could not be started"), ".")
		return nil, nil, 0, fmt.Errorf("the MCP server %q is not running (%s); fix it, then connect it again in Settings", name, reason)
	}
	cs, gen, err := s.session(ctx)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("the MCP server %q is not available: %w", name, err)
	}
	return s, cs, gen, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none (add one in Settings)"
	}
	return strings.Join(names, ", ")
}

// requestError explains a failed prompt or resource request about what,
// recording a crash when the connection is gone.
func (s *server) requestError(ctx, cctx context.Context, gen int, what string, err error) error {
	detail := text.OneLine(err.Error(), 300)
	var rpcErr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the request for %s was cancelled before the MCP server %q answered", what, s.name)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		s.log.Note(fmt.Sprintf("the request for %s timed out after %s", what, s.cfg.CallTimeout()))
		return fmt.Errorf("the MCP server %q did not answer the request for %s within %s; try again later", s.name, what, s.cfg.CallTimeout())
	case isClosed(err), errors.As(err, &rpcErr) && rpcErr.Code == codeRejected:
		s.ended(gen, detail)
		return fmt.Errorf("the MCP server %q stopped during the request for %s (%s); try again, it is restarted once", s.name, what, detail)
	case isMalformed(err):
		return fmt.Errorf("the MCP server %q returned malformed data for %s (%s); tell the server's author", s.name, what, detail)
	case errors.As(err, &rpcErr):
		return fmt.Errorf("the MCP server %q refused the request for %s (%s); check the name and the arguments", s.name, what, text.OneLine(rpcErr.Message, 300))
	}
	return fmt.Errorf("the MCP server %q could not answer the request for %s (%s); try again later", s.name, what, detail)
}
