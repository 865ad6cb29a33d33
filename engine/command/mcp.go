package command

import (
	"context"
	"strings"

	"github.com/tally-dev/tally/engine/mcp"
)

// mcpPrompts is the commands of a session's MCP servers' prompts. When
// await is set, lookup first waits for the servers still starting (as a
// message naming one of their prompts must); list never waits.
type mcpPrompts struct {
	mgr   *mcp.Manager
	await func()
}

// PromptCommand returns the slash command of an MCP prompt:
// "/server:prompt", its description and its arguments.
func PromptCommand(p mcp.Prompt) Command {
	c := Command{Name: p.Server + ":" + p.Name, Description: p.Description, Source: SourceMCP}
	if c.Description == "" {
		c.Description = p.Title
	}
	for _, a := range p.Arguments {
		c.Args = append(c.Args, Arg{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	c.Hint = hintOf(c.Args)
	return c
}

func (p mcpPrompts) List(ctx context.Context) []Command {
	var out []Command
	for _, pr := range p.mgr.Prompts(ctx) {
		out = append(out, PromptCommand(pr))
	}
	return out
}

func (p mcpPrompts) Lookup(ctx context.Context, name string) (Command, bool) {
	server, prompt, ok := strings.Cut(name, ":")
	if !ok {
		return Command{}, false
	}
	if p.await != nil {
		p.await()
	}
	pr, ok := p.mgr.LookupPrompt(ctx, server, prompt)
	if !ok {
		return Command{}, false
	}
	return PromptCommand(pr), true
}

func (p mcpPrompts) Expand(ctx context.Context, c Command, rest string, skip func(string) bool) (string, error) {
	args, err := BindArgs(c, rest, skip)
	if err != nil {
		return "", err
	}
	server, prompt, _ := strings.Cut(c.Name, ":")
	return p.mgr.GetPrompt(ctx, server, prompt, args)
}

// ForSession is a session's command registry: the built-in commands,
// the command files (the user's, in userConfigDir, before the
// workspace's) and, when mgr is not nil, the MCP servers' prompts, a name
// in an earlier one hiding it in a later one. await, when not nil, is
// called before an MCP prompt is looked up, to wait for the servers still
// starting.
func ForSession(userConfigDir, workspace string, mgr *mcp.Manager, await func()) Registry {
	r := Registry{Sources: []Provider{builtinCommands{}, Folders(userConfigDir, workspace)}}
	if mgr != nil {
		r.Sources, r.strict = append(r.Sources, mcpPrompts{mgr: mgr, await: await}), true
	}
	return r
}
