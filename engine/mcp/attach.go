package mcp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
)

// This file is the "@server:uri" attachments of a user's message: the
// tokens that name a server's resource, and the blocks that carry what
// the server returned for them.

// ResourceToken returns the "@server:uri" token that attaches r to a
// message; a URI holding white space or a quote is quoted.
func ResourceToken(r Resource) string {
	if strings.ContainsAny(r.URI, " \t\r\n\"'") {
		return "@" + r.Server + ":" + strconv.Quote(r.URI)
	}
	return "@" + r.Server + ":" + r.URI
}

// attachRE finds "@server:uri" tokens: at the start or after white space,
// a server name, a colon and a URI up to white space, or quoted.
var attachRE = regexp.MustCompile(`(?:^|\s)@([A-Za-z0-9_-]{1,32}):("(?:[^"\\]|\\.)*"|\S+)`)

// MaxAttachments bounds the resources one message attaches.
const MaxAttachments = 10

// attachment is one "@server:uri" of a message.
type attachment struct{ server, uri string }

// attachments returns the "@server:uri" tokens of msg whose server is one
// of servers, each once, in order. A token of another name ("@bob:3pm")
// is text. Punctuation ending a sentence is not part of the URI unless a
// listed resource's URI ends so.
func attachments(msg string, servers []string, listed func(server, uri string) bool) []attachment {
	var out []attachment
	for _, m := range attachRE.FindAllStringSubmatch(msg, -1) {
		server, uri := m[1], m[2]
		if !slices.Contains(servers, server) {
			continue
		}
		if strings.HasPrefix(uri, `"`) {
			u, err := strconv.Unquote(uri)
			if err != nil {
				continue
			}
			uri = u
		} else if trimmed := strings.TrimRight(uri, ".,;:!?)]}'\""); trimmed != uri && !listed(server, uri) {
			uri = trimmed
		}
		if uri == "" {
			continue
		}
		a := attachment{server, uri}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Attach reads the resources msg attaches with "@server:uri" tokens
// naming one of servers (a token of another name, "@bob:3pm", is text)
// and returns one block for each, in order, with the number of secrets
// redacted in them. Each resource is server text: it is redacted like a
// file a tool reads, neutralised, and wrapped in tags naming its server,
// URI and type. At most MaxAttachments resources are read; a message
// with more, or a resource that cannot be read, fails with an error
// saying which, and nothing is attached.
func (m *Manager) Attach(ctx context.Context, msg string, servers []string) ([]transcript.Block, int, error) {
	var resources []Resource
	fetched := false
	listed := func(server, uri string) bool {
		if !fetched {
			resources, fetched = m.Resources(ctx), true
		}
		return slices.ContainsFunc(resources, func(x Resource) bool { return x.Server == server && x.URI == uri })
	}
	atts := attachments(msg, servers, listed)
	if len(atts) > MaxAttachments {
		return nil, 0, fmt.Errorf("the message attaches %d resources; attach at most %d at a time", len(atts), MaxAttachments)
	}
	var blocks []transcript.Block
	noted := 0
	for _, a := range atts {
		rt, err := m.ReadResource(ctx, a.server, a.uri)
		if err != nil {
			return nil, 0, fmt.Errorf("@%s:%s could not be attached: %s", a.server, a.uri, strings.TrimSuffix(err.Error(), "."))
		}
		block, n := attachmentBlock(rt)
		blocks = append(blocks, block)
		noted += n
	}
	return blocks, noted, nil
}

// attachTag is the tag of an attachment block. It is not an engine tag:
// the block is part of the user's message, which the user chose to send.
const attachTag = "attachment"

// attachmentBlock is the block of a resource read: its text redacted and
// neutralised, between tags naming its server, URI and type, with any
// copy of those tags in the text defused. It also returns how many
// secrets were redacted.
func attachmentBlock(rt ResourceText) (transcript.Block, int) {
	body, n := secrets.Count(rt.Text)
	body = defuseTag(transcript.Neutralize(body), attachTag)
	head := fmt.Sprintf("<%s server=%s uri=%s", attachTag, strconv.Quote(rt.Server), strconv.Quote(transcript.NeutralizeLine(rt.URI)))
	if rt.MIMEType != "" {
		head += " type=" + strconv.Quote(transcript.NeutralizeLine(rt.MIMEType))
	}
	text := head + ">\n" + strings.TrimRight(body, "\n") + "\n</" + attachTag + ">"
	return transcript.Block{Type: transcript.BlockText, Text: text}, n
}

// defuseTag replaces the "<" of every "<tag" and "</tag" in s (any letter
// case) by "‹", so the text cannot close or open its block.
func defuseTag(s, tag string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '/' {
			j++
		}
		if len(s)-j >= len(tag) && strings.EqualFold(s[j:j+len(tag)], tag) {
			b.WriteString(s[last:i])
			b.WriteString("‹")
			last = i + 1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
