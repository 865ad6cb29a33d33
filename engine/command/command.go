// Package command is the slash commands of the prompt: a message whose
// first word names a command ("/docs:review 42") is replaced by the text
// the command stands for before it enters the conversation. Commands come
// from Providers, asked in turn by a Registry: the built-in commands
// (builtin.go), which are actions the host performs rather than text; the
// user's and the workspace's command files (files.go); and the MCP
// servers' prompts (mcp.go). A first word that starts with "/" but names
// no command and does not look like one ("/etc/hosts is …") leaves the
// message as it is. Errors a user can correct are *Error.
package command

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Source names where a command comes from.
type Source string

// The Sources of commands.
const (
	// SourceMCP is a prompt of an MCP server, named "server:prompt".
	SourceMCP Source = "mcp"
	// SourceBuiltin is one of Tally's own commands (/compact, /help …):
	// an action the host performs, never text sent to the model.
	SourceBuiltin Source = "builtin"
	// SourceUser is a template file in the user's commands folder
	// (~/.config/tally/commands).
	SourceUser Source = "user"
	// SourceWorkspace is a template file in the workspace's
	// .tally/commands or .claude/commands folder.
	SourceWorkspace Source = "workspace"
)

// Command is one slash command, for the prompt box's list and for
// expanding a message.
type Command struct {
	// Name is what follows the "/": "server:prompt" for an MCP prompt.
	Name string
	// Description says what the command does, on one line ("" when its
	// source says nothing).
	Description string
	// Hint shows its arguments, such as "<pr> [focus]": required ones
	// in angle brackets, optional ones in square brackets; "" for none.
	Hint string
	// Args are the declared arguments, in their order (an MCP prompt's;
	// a command file takes its words as they are typed and declares none).
	Args   []Arg
	Source Source
	// Action is what a built-in command does instead of sending text; it
	// is "" for every command that expands into a message.
	Action Action
	// File is the template of a command file, as shown to the user
	// (".tally/commands/review.md"); "" for other commands.
	File string
	// Problem says, in one sentence, why the command cannot be used now
	// (a command file whose header is not valid YAML); "" when it can.
	Problem string

	body string // a command file's template, once looked up
}

// Arg is one declared argument of a [Command].
type Arg struct {
	Name, Description string
	Required          bool
}

// Usage returns how the command is typed: "/name" and its hint.
func (c Command) Usage() string {
	if c.Hint == "" {
		return "/" + c.Name
	}
	return "/" + c.Name + " " + c.Hint
}

// hintOf is the Hint of arguments.
func hintOf(args []Arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if a.Required {
			parts[i] = "<" + a.Name + ">"
		} else {
			parts[i] = "[" + a.Name + "]"
		}
	}
	return strings.Join(parts, " ")
}

// Error is the error of a message whose slash command could not be
// expanded (an unknown command, a missing argument, a server that failed):
// nothing entered the conversation and the message can be corrected and
// sent again.
type Error struct{ msg string }

// Error implements error.
func (e *Error) Error() string { return e.msg }

func Errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// Provider is one place commands come from.
type Provider interface {
	// List returns the source's commands, sorted by name.
	List(ctx context.Context) []Command
	// Lookup returns the named command; it may look harder than List (a
	// source whose list is cached asks again).
	Lookup(ctx context.Context, name string) (Command, bool)
	// Expand returns the text command c stands for with the arguments
	// typed after its name (rest); words for which skip (when not nil)
	// reports true are attachments, not arguments. A *Error is
	// the user's to correct; any other error is the source's failure.
	Expand(ctx context.Context, c Command, rest string, skip func(string) bool) (string, error)
}

// Registry is the commands of a session, from all its Sources. A
// name found in an earlier source hides the same name in a later one.
// With strict set (the session has MCP servers) a first word of the
// "server:prompt" shape that names no command is an error, not text.
type Registry struct {
	Sources []Provider
	strict  bool
}

// List returns every command, sorted by name.
func (r Registry) List(ctx context.Context) []Command {
	var out []Command
	seen := map[string]bool{}
	for _, src := range r.Sources {
		for _, c := range src.List(ctx) {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (r Registry) Lookup(ctx context.Context, name string) (Command, Provider, bool) {
	for _, src := range r.Sources {
		if c, ok := src.Lookup(ctx, name); ok {
			return c, src, true
		}
	}
	return Command{}, nil, false
}

// namespaced is the shape of a command name with a namespace,
// "server:prompt": a first word of that shape is read as a command even
// when there is none of that name, so that a mistyped one is reported
// rather than sent.
var namespaced = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9_][^/\s]*$`)

// Expand returns the text of msg with its slash command expanded: msg
// itself when its first word names no command. Words for which skip
// reports true (the attachments) are not arguments. An unknown command of
// the "server:prompt" shape, a missing required argument or a failing
// source is a *Error.
func (r Registry) Expand(ctx context.Context, msg string, skip func(word string) bool) (string, bool, error) {
	trimmed := strings.TrimLeftFunc(msg, unicode.IsSpace)
	if !strings.HasPrefix(trimmed, "/") {
		return msg, false, nil
	}
	word, rest := trimmed, ""
	if i := strings.IndexFunc(trimmed, unicode.IsSpace); i >= 0 {
		word, rest = trimmed[:i], trimmed[i:]
	}
	name := word[1:]
	if name == "" {
		return msg, false, nil
	}
	c, src, ok := r.Lookup(ctx, name)
	if !ok {
		if !namespaced.MatchString(name) || !r.knownNamespace(ctx, name) {
			return msg, false, nil
		}
		return "", false, r.unknown(ctx, name)
	}
	if c.Problem != "" {
		where := ""
		if c.File != "" {
			where = " (" + c.File + ")"
		}
		return "", false, Errorf("the command /%s%s cannot be used: %s", c.Name, where, strings.TrimSuffix(c.Problem, "."))
	}
	if c.Action != "" {
		return "", false, actionError(c)
	}
	out, err := src.Expand(ctx, c, rest, skip)
	var ce *Error
	if errors.As(err, &ce) {
		return "", false, err
	}
	if err != nil {
		return "", false, Errorf("the command /%s failed: %s", c.Name, strings.TrimSuffix(err.Error(), "."))
	}
	if strings.TrimSpace(out) == "" {
		return "", false, Errorf("the command /%s gave no text; check its arguments (usage: %s)", c.Name, c.Usage())
	}
	return out, true, nil
}

// knownNamespace reports whether a name of the "server:prompt" shape is
// meant as a command: the session has MCP servers, or a folder of command
// files bears the name's namespace. Otherwise "/10:30 standup" is text.
func (r Registry) knownNamespace(ctx context.Context, name string) bool {
	if r.strict {
		return true
	}
	ns, _, _ := strings.Cut(name, ":")
	return slices.ContainsFunc(r.List(ctx), func(c Command) bool { return strings.HasPrefix(c.Name, ns+":") })
}

// unknown is the error for a command name that is not there, naming the
// nearest ones.
func (r Registry) unknown(ctx context.Context, name string) error {
	all := slices.DeleteFunc(r.List(ctx), func(c Command) bool { return c.Source == SourceBuiltin })
	if len(all) == 0 {
		return Errorf("there is no command /%s, and no MCP server offers any command now; to send the text as it is, put another word before it", name)
	}
	return Errorf("there is no command /%s; the nearest are %s (to send the text as it is, put another word before it)", name, strings.Join(nearest(name, all, 5), ", "))
}

// nearest returns the usages of up to n commands whose names are closest
// to name: the same namespace first, then the smallest edit distance.
func nearest(name string, all []Command, n int) []string {
	ns, _, _ := strings.Cut(name, ":")
	type scored struct {
		c     Command
		score int
	}
	var ss []scored
	for _, c := range all {
		score := distance(strings.ToLower(name), strings.ToLower(c.Name))
		if cns, _, _ := strings.Cut(c.Name, ":"); !strings.EqualFold(cns, ns) {
			score += 100
		}
		ss = append(ss, scored{c, score})
	}
	slices.SortStableFunc(ss, func(a, b scored) int { return a.score - b.score })
	var out []string
	for i := 0; i < len(ss) && i < n; i++ {
		out = append(out, "/"+ss[i].c.Name)
	}
	return out
}

// distance is the Levenshtein distance of a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// BindArgs matches the words of rest to c's arguments: "key=value" for a
// declared key, other words in the order of the arguments not given by
// key; words past the last argument join the last one given by position,
// so "/docs:search error handling" passes "error handling". Quotes ("…"
// or '…') keep spaces in a value. Words for which skip (when not nil)
// reports true are left out.
func BindArgs(c Command, rest string, skip func(string) bool) (map[string]string, error) {
	words, err := splitWords(rest)
	if err != nil {
		return nil, Errorf("the arguments of /%s %s; usage: %s", c.Name, err.Error(), c.Usage())
	}
	args := map[string]string{}
	var positional []string
	for _, w := range words {
		if skip != nil && skip(w) {
			continue
		}
		if k, v, ok := strings.Cut(w, "="); ok && slices.ContainsFunc(c.Args, func(a Arg) bool { return a.Name == k }) {
			args[k] = v
			continue
		}
		positional = append(positional, w)
	}
	if len(positional) > 0 && len(c.Args) == 0 {
		return nil, Errorf("the command /%s takes no arguments but got %q; send it as /%s alone", c.Name, strings.Join(positional, " "), c.Name)
	}
	last := ""
	for _, a := range c.Args {
		if len(positional) == 0 {
			break
		}
		if _, given := args[a.Name]; given {
			continue
		}
		args[a.Name], positional, last = positional[0], positional[1:], a.Name
	}
	if len(positional) > 0 {
		if last == "" {
			return nil, Errorf("the command /%s got more values than it has arguments (%q left over); usage: %s", c.Name, strings.Join(positional, " "), c.Usage())
		}
		args[last] = strings.Join(append([]string{args[last]}, positional...), " ")
	}
	var missing []string
	for _, a := range c.Args {
		if v, ok := args[a.Name]; a.Required && (!ok || v == "") {
			missing = append(missing, a.Name)
		}
	}
	switch len(missing) {
	case 0:
		return args, nil
	case 1:
		return nil, Errorf("the command /%s needs the argument %s%s; usage: %s", c.Name, missing[0], argAbout(c, missing[0]), c.Usage())
	}
	return nil, Errorf("the command /%s needs the arguments %s; usage: %s", c.Name, joinAnd(missing), c.Usage())
}

// argAbout is " (its description)" of the named argument, or "".
func argAbout(c Command, name string) string {
	for _, a := range c.Args {
		if a.Name == name && a.Description != "" {
			return " (" + a.Description + ")"
		}
	}
	return ""
}

func joinAnd(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// splitWords splits s at white space, as a shell does: quotes ("…" or
// '…') keep white space in a word and are removed; inside double quotes a
// backslash escapes a quote or a backslash. A quote left open is an
// error.
func splitWords(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			if inWord {
				words, inWord = append(words, b.String()), false
				b.Reset()
			}
			i += size
		case r == '"' || r == '\'':
			inWord = true
			j := i + 1
			for ; j < len(s) && rune(s[j]) != r; j++ {
				if r == '"' && s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("leave a %c quote open", r)
			}
			i = j + 1
		default:
			inWord = true
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}
