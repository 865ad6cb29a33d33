package agent

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
)

// This file is the session's slash commands (an MCP server's prompt is the
// command "/server:prompt"; its "@server:uri" attachments are mcp.Attach)
// and what a message goes through before it enters the conversation (see
// prepareMessage).

// registry is the session's command registry (see command.ForSession).
// With await set, looking up an MCP prompt waits for the servers still
// starting.
func (h Commands) registry(await bool) command.Registry {
	s := h.s
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
	return h.registry(false).List(ctx)
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
func (t *turnLoop) prepareMessage(ctx context.Context, msg string) (prepared, error) {
	s := t.s
	p := prepared{typed: msg, text: msg}
	reg, r := Commands{s}.registry(true), s.mcpRun
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
	blocks, n, err := r.Manager().Attach(ctx, msg, servers)
	if err != nil {
		return p, command.Errorf("%s", err.Error())
	}
	p.blocks, p.noted = append(p.blocks, blocks...), p.noted+n
	return p, nil
}
