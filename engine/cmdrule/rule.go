// Package cmdrule matches run_shell command lines against the user's
// command rules ("always allow `go test ./...`", "never run `rm *`") on
// the parsed shell structure, never on the text alone.
//
// A pattern is a command written as plain words, such as `go test ./...`;
// a last word `*` (or the form `npm run lint:*`, and `Bash(…)` around the
// whole) lets any further words follow, none included. Words compare
// exactly, after the shell's quote removal: `'go' test` is `go test`, and
// a look-alike letter is a different word.
//
// An allow rule covers a command line only when the line is made of
// simple commands of literal words, joined by `;`, a new line, `&&`, `||`
// or `|`, every one of which some allow rule covers. Anything the shell
// would compute or that could run something else keeps the line from
// matching: variables, command and process substitution, arithmetic,
// globs, `~`, braces, subshells and blocks, functions, loops and other
// compound commands, background jobs, variable assignments before the
// command, here-documents and redirections to or from files (only
// `/dev/null` and joining descriptors, as in `>/dev/null 2>&1`, are
// allowed). A line that does not parse matches no allow rule. No allow
// rule may start with a program that runs its arguments as a command
// (`bash`, `sh`, `eval`, `exec`, `env`, `sudo`, `xargs`…).
//
// A deny rule refuses a line when any simple command in it, wherever it
// sits (in a pipeline, a substitution, a subshell, a function, after a
// wrapper such as `sudo` or `timeout`, or inside the literal script of
// `bash -c`, `eval` or a here-document fed to a shell), matches the rule.
// A word the shell computes is taken to be any words at all, so
// `$(echo rm) -rf /` meets the rule `rm *`. Deny rules guard against
// mistakes; they are not a sandbox (a script file the agent writes can
// still do anything).
package cmdrule

import (
	"errors"
	"fmt"
	"github.com/tally-dev/tally/internal/shellword"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind says whether a rule allows or refuses the commands it matches.
type Kind int

// The kinds of rules.
const (
	// Allow lets a matching command run without asking.
	Allow Kind = iota
	// Deny refuses a matching command without asking.
	Deny
)

// String returns "allow" or "deny".
func (k Kind) String() string {
	if k == Deny {
		return "deny"
	}
	return "allow"
}

// MaxPattern is the longest pattern accepted, in bytes.
const MaxPattern = 1000

// Rule is one parsed command pattern. The zero Rule matches nothing.
type Rule struct {
	kind   Kind
	words  []string
	prefix bool // a trailing * lets any further words follow
}

// Kind returns whether the rule allows or refuses.
func (r Rule) Kind() Kind { return r.kind }

// Words returns the literal words the rule starts with.
func (r Rule) Words() []string { return append([]string(nil), r.words...) }

// Prefix reports whether any further words may follow Words.
func (r Rule) Prefix() bool { return r.prefix }

// Pattern returns the rule's canonical text, which [Parse] reads back to
// the same rule: the words, quoted where the shell needs it, and " *" for
// a prefix rule, such as `npm run lint *`.
func (r Rule) Pattern() string {
	parts := make([]string, 0, len(r.words)+1)
	for i, w := range r.words {
		parts = append(parts, quote(w, i == 0))
	}
	if r.prefix {
		parts = append(parts, "*")
	}
	return strings.Join(parts, " ")
}

// String returns the kind and the pattern, such as "allow go test ./...".
func (r Rule) String() string { return r.kind.String() + " " + r.Pattern() }

// runners are programs that run their arguments as a command line or
// another program: an allow rule for one would allow every command.
var runners = map[string]bool{
	"eval": true, "exec": true, "source": true, ".": true, "command": true, "builtin": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"fish": true, "csh": true, "tcsh": true, "busybox": true,
	"env": true, "sudo": true, "doas": true, "su": true, "xargs": true, "nohup": true,
	"nice": true, "ionice": true, "time": true, "timeout": true, "stdbuf": true, "setsid": true,
	"watch": true, "chroot": true, "unbuffer": true, "parallel": true, "flock": true,
	"strace": true, "ltrace": true, "taskset": true, "chrt": true, "script": true,
}

// blanks are the characters around words.
const blanks = " \t\r\n"

// Parse reads a pattern of the given kind. It refuses, with one sentence
// saying what to write instead, a pattern that is empty, too long, not
// valid shell, more than one command, or anything but plain words (a
// variable, a substitution, a redirection, an assignment, a glob or `*`
// other than as the last word); and an allow pattern that would cover
// every command (only `*`, or a program such as `bash` or `sudo` that
// runs its arguments).
func Parse(kind Kind, pattern string) (Rule, error) {
	// Only the blanks the shell itself splits words at are trimmed.
	p := strings.Trim(pattern, blanks)
	if inner, ok := strings.CutPrefix(p, "Bash("); ok && strings.HasSuffix(inner, ")") {
		p = strings.Trim(strings.TrimSuffix(inner, ")"), blanks)
	}
	switch {
	case p == "":
		return Rule{}, errors.New("the command pattern is empty; write a command such as `go test ./...` or `npm run lint *`")
	case len(p) > MaxPattern:
		return Rule{}, fmt.Errorf("the command pattern is %d bytes long, over the limit of %d; write a shorter command", len(p), MaxPattern)
	case !utf8.ValidString(p):
		return Rule{}, errors.New("the command pattern is not valid UTF-8 text; type it again")
	case strings.IndexFunc(p, badRune) >= 0:
		return Rule{}, fmt.Errorf("the command pattern %s has a control or invisible character; type it again with plain characters", show(p))
	}
	f, err := shellword.Parse(p)
	if err != nil {
		return Rule{}, fmt.Errorf("the command pattern %s is not valid shell (%w); write it as you would type the command", show(p), err)
	}
	if len(f.Stmts) != 1 {
		return Rule{}, fmt.Errorf("the command pattern %s holds more than one command; make one rule for each command", show(p))
	}
	call, why := simpleCall(f.Stmts[0])
	if why != "" {
		return Rule{}, fmt.Errorf("the command pattern %s %s, which a rule cannot match; write the command as plain words", show(p), why)
	}
	r := Rule{kind: kind}
	for i, w := range call.Args {
		last := i == len(call.Args)-1
		if last && isStar(w) {
			r.prefix = true
			break
		}
		if last {
			if s, ok := claudeStar(w, kind == Deny); ok {
				r.prefix = true
				if s != "" {
					r.words = append(r.words, s)
				}
				break
			}
		}
		s, ok := wordValue(w, kind == Deny)
		if !ok {
			if isStar(w) {
				return Rule{}, fmt.Errorf("the command pattern %s has * before its last word; a * may only end a pattern, to allow any further words", show(p))
			}
			return Rule{}, fmt.Errorf("the command pattern %s has the word %s, which the shell would expand (a variable, a substitution, a glob, ~ or braces); quote it or write it out", show(p), show(p[w.Pos().Offset():w.End().Offset()]))
		}
		r.words = append(r.words, s)
	}
	if len(r.words) == 0 {
		if kind == Deny {
			return Rule{}, errors.New("a deny pattern of only * would refuse every command; name the command, such as `rm *`, or use read-only mode")
		}
		return Rule{}, errors.New("an allow pattern of only * would allow every command; name the command, such as `go test *`")
	}
	if kind == Allow && runners[path.Base(r.words[0])] {
		return Rule{}, fmt.Errorf("an allow rule for %s would let any command run through it; allow the command it runs instead", show(r.words[0]))
	}
	return r, nil
}

// badRune reports characters a pattern may not hold: controls (a tab
// included) and invisible format characters.
func badRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// show quotes s for a message, in backquotes, cut to 80 runes, with
// control and invisible characters escaped.
func show(s string) string {
	var b strings.Builder
	b.WriteByte('`')
	n := 0
	for _, r := range s {
		if n == 80 {
			b.WriteString("…")
			break
		}
		n++
		if badRune(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('`')
	return b.String()
}

// exact is the allow rule for exactly the words of one simple command; ok
// is false when no allow rule may be made from them.
func exact(words []string) (Rule, bool) {
	if len(words) == 0 || runners[path.Base(words[0])] {
		return Rule{}, false
	}
	for _, w := range words {
		if !utf8.ValidString(w) || strings.IndexFunc(w, badRune) >= 0 {
			return Rule{}, false
		}
	}
	r := Rule{kind: Allow, words: words}
	if len(r.Pattern()) > MaxPattern {
		return Rule{}, false
	}
	return r, true
}

// word is one word of a command for matching: its value after quote
// removal, or unknown when the shell computes it.
type word struct {
	s       string
	unknown bool
}

// matches reports whether the rule covers the words of one simple
// command. An unknown word (only a deny check passes them) may stand for
// any number of words, none included.
func (r Rule) matches(ws []word) bool {
	p, n := len(r.words), len(ws)
	if p == 0 || n == 0 {
		return false
	}
	if !ws[0].unknown && !r.wordIs(0, ws[0].s) {
		return false
	}
	// failed marks the states (pattern word i, command word j) already
	// found not to match.
	failed := make([]bool, (p+1)*(n+1))
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if failed[i*(n+1)+j] {
			return false
		}
		ok := false
		switch {
		case j == n:
			ok = i == p
		case i == p:
			ok = r.prefix || (ws[j].unknown && match(i, j+1))
		case ws[j].unknown:
			ok = match(i, j+1) || match(i+1, j) || match(i+1, j+1)
		case r.wordIs(i, ws[j].s):
			ok = match(i+1, j+1)
		}
		if !ok {
			failed[i*(n+1)+j] = true
		}
		return ok
	}
	return match(0, 0)
}

// wordIs reports whether s is the rule's word i; a deny rule's command
// name also meets the same program named by a path, such as /bin/rm.
func (r Rule) wordIs(i int, s string) bool {
	return s == r.words[i] || (i == 0 && r.kind == Deny && sameProgram(s, r.words[0]))
}

// sameProgram reports whether a command name given as a path, such as
// /bin/rm, names the program of a deny pattern written without one.
func sameProgram(name, pattern string) bool {
	return !strings.Contains(pattern, "/") && strings.Contains(name, "/") && path.Base(name) == pattern
}
