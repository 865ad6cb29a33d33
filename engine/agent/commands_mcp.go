package agent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
)

// This file is the MCP source of slash commands (a server's prompt is the
// command "/server:prompt") and the "@server:uri" attachments of a
// message, and what a message goes through before it enters the
// conversation (see prepareMessage).

// commands is the session's command registry (see command.ForSession).
// With await set, looking up an MCP prompt waits for the servers still
// starting.
func (s *Session) commands(await bool) command.Registry {
	var mgr *mcp.Manager
	var wait func()
	if s.mcpRun != nil {
		mgr = s.mcpRun.Manager()
		if await {
			wait = s.mcpRun.AwaitStart
		}
	}
	return command.ForSession(s.cfg.UserConfigDir, s.meta.Workspace, mgr, wait)
}

// Commands is the session's slash commands and attachable resources, for
// the prompt box's completion.
type Commands struct{ s *Session }

// Commands returns the session's command handle.
func (s *Session) Commands() Commands { return Commands{s} }

// listWait bounds how long the prompt box's lists wait for the servers.
const listWait = 5 * time.Second

// List returns the commands available now, sorted by name: the built-in
// ones, those of the command files (read afresh, so an edit shows at
// once; one that cannot be used has its Problem set) and the prompts of
// the MCP servers that are connected. It never waits for a running turn,
// never starts a server, and waits at most a few seconds for a slow one
// (which is then left out).
func (h Commands) List(ctx context.Context) []command.Command {
	ctx, cancel := context.WithTimeout(ctx, listWait)
	defer cancel()
	return h.s.commands(false).List(ctx)
}

// Notes returns one sentence for each command file that cannot be used
// and each commands folder that cannot be read, in the order of the
// folders; nil when all is well.
func (h Commands) Notes() []string {
	_, notes := command.Folders(h.s.cfg.UserConfigDir, h.s.meta.Workspace).Scan()
	return notes
}

// Resources returns the resources (and resource templates) of the
// connected MCP servers, sorted by server then URI, each attachable with
// ResourceToken. Like List it never waits for a turn nor starts a server.
func (h Commands) Resources(ctx context.Context) []mcp.Resource {
	r := h.s.mcpRun
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, listWait)
	defer cancel()
	return r.Manager().Resources(ctx)
}

// ResourceToken returns the "@server:uri" token that attaches r to a
// message; a URI holding white space or a quote is quoted.
func ResourceToken(r mcp.Resource) string {
	if strings.ContainsAny(r.URI, " \t\r\n\"'") {
		return "@" + r.Server + ":" + strconv.Quote(r.URI)
	}
	return "@" + r.Server + ":" + r.URI
}

// attachRE finds "@server:uri" tokens: at the start or after white space,
// a server name, a colon and a URI up to white space, or quoted.
var attachRE = regexp.MustCompile(`(?:^|\s)@([A-Za-z0-9_-]{1,32}):("(?:[^"\\]|\\.)*"|\S+)`)

// maxAttachments bounds the resources one message attaches.
const maxAttachments = 10

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

// prepared is a message made ready to enter the conversation.
type prepared struct {
	typed  string             // what the user sent, for the title
	text   string             // the message's text: as typed, or its command expanded
	blocks []transcript.Block // the attachments, after the text
	noted  int                // secrets redacted in the expansion and the attachments
}

// message is the user message of p, under its turn header.
func (p prepared) message(meta string, at time.Time) transcript.Message {
	m := transcript.UserText(meta, p.text, at)
	m.Blocks = append(m.Blocks, p.blocks...)
	m.Redacted = p.noted
	return m
}

// prepareMessage expands the slash command of msg and reads the resources
// it attaches. The command's text (an MCP prompt's or a command file's)
// and every resource are redacted like a file a tool reads (the turn's
// intake then treats the message as any the user typed), and each
// resource, server text, is neutralised and wrapped in an attachment
// block naming its server and URI. It waits for the MCP servers still
// starting (as the first request does) only when msg needs them: a
// built-in command or a command file never waits. Errors are
// *CommandError: nothing entered the conversation.
func (s *Session) prepareMessage(ctx context.Context, msg string) (prepared, error) {
	p := prepared{typed: msg, text: msg}
	reg, r := s.commands(true), s.mcpRun
	slash := strings.HasPrefix(strings.TrimSpace(msg), "/")
	at := r != nil && strings.Contains(msg, "@")
	if !slash && !at {
		return p, nil
	}
	var servers []string
	if at {
		s.mcpRun.AwaitStart()
		for _, st := range r.Manager().Statuses() {
			servers = append(servers, st.Name)
		}
	}
	isAttachment := func(word string) bool {
		server, uri, ok := strings.Cut(strings.TrimPrefix(word, "@"), ":")
		return ok && uri != "" && strings.HasPrefix(word, "@") && slices.Contains(servers, server)
	}
	if slash {
		out, expanded, err := reg.Expand(ctx, msg, isAttachment)
		if err != nil {
			return p, err
		}
		if expanded {
			var n int
			p.text, n = secrets.Count(out)
			p.noted += n
		}
	}
	if !at {
		return p, nil
	}
	var resources []mcp.Resource
	fetched := false
	listed := func(server, uri string) bool {
		if !fetched {
			resources, fetched = r.Manager().Resources(ctx), true
		}
		return slices.ContainsFunc(resources, func(x mcp.Resource) bool { return x.Server == server && x.URI == uri })
	}
	atts := attachments(msg, servers, listed)
	if len(atts) > maxAttachments {
		return p, command.Errorf("the message attaches %d resources; attach at most %d at a time", len(atts), maxAttachments)
	}
	for _, a := range atts {
		rt, err := r.Manager().ReadResource(ctx, a.server, a.uri)
		if err != nil {
			return p, command.Errorf("@%s:%s could not be attached: %s", a.server, a.uri, strings.TrimSuffix(err.Error(), "."))
		}
		block, n := attachmentBlock(rt)
		p.blocks = append(p.blocks, block)
		p.noted += n
	}
	return p, nil
}

// attachTag is the tag of an attachment block. It is not an engine tag:
// the block is part of the user's message, which the user chose to send.
const attachTag = "attachment"

// attachmentBlock is the block of a resource read: its text redacted and
// neutralised, between tags naming its server, URI and type, with any
// copy of those tags in the text defused. It also returns how many
// secrets were redacted.
func attachmentBlock(rt mcp.ResourceText) (transcript.Block, int) {
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
