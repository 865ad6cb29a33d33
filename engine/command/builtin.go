package command

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The built-in commands: /compact, /new-cycle, /rewind, /model and /help
// name what the app already does. They are actions, not text: the host
// (the app or the command line) performs them and nothing is sent to the
// model. They come first in the registry, so a command file of the same
// name is hidden (and noted).

// Action names what a built-in command does.
type Action string

// The actions of the built-in commands.
const (
	// ActionCompact compacts the conversation now (Compaction).
	ActionCompact Action = "compact"
	// ActionNewCycle closes the cycle and starts the next (Compaction().NewCycle).
	ActionNewCycle Action = "new-cycle"
	// ActionRewind goes back to the start of a turn (Session.Rewind).
	ActionRewind Action = "rewind"
	// ActionModel shows the session's model, or switches it (see
	// Invocation.Profile and Model).
	ActionModel Action = "model"
	// ActionHelp lists the commands.
	ActionHelp Action = "help"
)

// builtin is a built-in command and what to do where the host cannot
// perform it.
type builtin struct {
	Command
	elsewhere string
}

var builtins = []builtin{
	{Command{Name: "compact", Description: "Compact the conversation now: preview what is cleared or summarised, then apply it.",
		Action: ActionCompact}, "in the app type it in the prompt box; on the command line run tally compact SESSION"},
	{Command{Name: "help", Description: "List the commands: built-in, your command files and the MCP servers' prompts.",
		Action: ActionHelp}, "in the app type it in the prompt box; on the command line run tally run /help"},
	{Command{Name: "model", Hint: "[@profile] [name]", Description: "Show the model this session talks to, or switch to another one (on a profile's endpoint).",
		Action: ActionModel}, "in the app type it in the prompt box; on the command line run `tally run --session ID \"/model NAME\"`"},
	{Command{Name: "new-cycle", Description: "Archive this cycle and start the next from a hand-off brief and the checklist.",
		Action: ActionNewCycle}, "in the app type it in the prompt box or press New cycle; on the command line run tally run --session SESSION /new-cycle"},
	{Command{Name: "rewind", Hint: "[turn]", Description: "Go back to the start of a turn (the last one unless given): files, conversation or both.",
		Action: ActionRewind}, "in the app type it in the prompt box; on the command line run tally rewind SESSION --to TURN"},
}

func init() {
	for i := range builtins {
		builtins[i].Source = SourceBuiltin
	}
}

// Builtins returns the built-in commands, sorted by name. Each has
// its Action set and Source SourceBuiltin.
func Builtins() []Command {
	out := make([]Command, len(builtins))
	for i, b := range builtins {
		out[i] = b.Command
	}
	return out
}

// builtinCommands is the registry's source of the built-in commands.
type builtinCommands struct{}

func (builtinCommands) List(context.Context) []Command { return Builtins() }

func (builtinCommands) Lookup(_ context.Context, name string) (Command, bool) {
	for _, b := range builtins {
		if b.Name == name {
			return b.Command, true
		}
	}
	return Command{}, false
}

func (builtinCommands) Expand(_ context.Context, c Command, _ string, _ func(string) bool) (string, error) {
	return "", actionError(c)
}

// actionError is the error of a message that invokes built-in command c
// and reached Run: the host should have performed it.
func actionError(c Command) error {
	for _, b := range builtins {
		if b.Name == c.Name {
			return Errorf("/%s is a command of the app, not a message for the model; %s", c.Name, b.elsewhere)
		}
	}
	return Errorf("/%s is a command of the app, not a message for the model", c.Name)
}

// Invocation is a message that invokes a built-in command: the command
// and its arguments.
type Invocation struct {
	Command Command
	// Args is the text after the command's name, trimmed ("" for none).
	Args string
	// Turn is /rewind's turn number; 0 means the last turn.
	Turn int
	// Profile and Model are what /model [@PROFILE] [NAME] switches to:
	// both "" for /model alone, which shows the current one.
	Profile, Model string
}

// ParseAction reports whether msg invokes a built-in command (its first
// word is "/compact", "/help" …) and, when it does, which, with its
// arguments. The error, a *Error, says what is wrong with the
// arguments (/compact takes none, /rewind a turn number); then ok is
// true too. It reads nothing and never blocks, so a host can call it
// before sending any message.
func ParseAction(msg string) (inv Invocation, ok bool, err error) {
	trimmed := strings.TrimSpace(msg)
	if !strings.HasPrefix(trimmed, "/") {
		return Invocation{}, false, nil
	}
	word, rest := trimmed, ""
	if i := strings.IndexFunc(trimmed, unicode.IsSpace); i >= 0 {
		word, rest = trimmed[:i], strings.TrimSpace(trimmed[i:])
	}
	c, found := builtinCommands{}.Lookup(context.Background(), word[1:])
	if !found {
		return Invocation{}, false, nil
	}
	inv = Invocation{Command: c, Args: rest}
	switch c.Action {
	case ActionRewind:
		if rest == "" {
			break
		}
		n, err := strconv.Atoi(strings.TrimPrefix(rest, "#"))
		if err != nil || n < 1 {
			return inv, true, Errorf("/rewind takes the number of a turn, such as /rewind 3, not %q; send /rewind alone for the last turn", rest)
		}
		inv.Turn = n
	case ActionModel:
		f := strings.Fields(rest)
		if len(f) > 0 && strings.HasPrefix(f[0], "@") {
			inv.Profile, f = strings.TrimPrefix(f[0], "@"), f[1:]
			if inv.Profile == "" {
				return inv, true, Errorf("/model @ needs a profile's name, such as /model @local; send /model alone to see the current one")
			}
		}
		if len(f) > 1 {
			return inv, true, Errorf("/model takes one model name, optionally after @PROFILE, not %q; send /model alone to see the current one", rest)
		}
		if len(f) == 1 {
			inv.Model = f[0]
		}
	default:
		if rest != "" {
			return inv, true, Errorf("/%s takes no arguments but got %q; send /%s alone", c.Name, rest, c.Name)
		}
	}
	return inv, true, nil
}

// HelpText is the text /help shows: one line per command, its usage and
// description, the built-in ones first, then the others with where they
// come from (a command that cannot be used says why instead), then the
// notes of the command files left out (see Commands.Notes).
func HelpText(cmds []Command, notes []string) string {
	var b strings.Builder
	b.WriteString("Built-in commands:\n")
	for _, c := range cmds {
		if c.Source == SourceBuiltin {
			fmt.Fprintf(&b, "  %s — %s\n", c.Usage(), c.Description)
		}
	}
	var others []string
	for _, c := range cmds {
		if c.Source == SourceBuiltin {
			continue
		}
		about := c.Description
		if c.Problem != "" {
			about = "cannot be used: " + c.Problem
		}
		where := "MCP server " + strings.SplitN(c.Name, ":", 2)[0]
		if c.File != "" {
			where = c.File
		}
		line := "  " + c.Usage()
		if about != "" {
			line += " — " + about
		}
		others = append(others, line+" ("+where+")")
	}
	if len(others) == 0 {
		b.WriteString("No other commands: put prompt templates in ~/.config/tally/commands/NAME.md or .tally/commands/NAME.md to add your own.\n")
	} else {
		b.WriteString("Your commands and the MCP servers' prompts:\n")
		b.WriteString(strings.Join(others, "\n"))
		b.WriteString("\n")
	}
	var left []string
	for _, n := range notes {
		if !slices.ContainsFunc(cmds, func(c Command) bool { return c.Problem != "" && n == c.File+": "+c.Problem }) {
			left = append(left, "  "+n)
		}
	}
	if len(left) > 0 {
		b.WriteString("Left out:\n")
		b.WriteString(strings.Join(left, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}
