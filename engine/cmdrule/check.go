package cmdrule

import (
	"errors"
	"fmt"
	"github.com/tally-dev/tally/internal/shellword"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxCommand is the longest command line checked, in bytes: a longer one
// is treated as one that does not parse.
const MaxCommand = 64 << 10

// maxDepth bounds how deep scripts inside scripts (`bash -c`, `eval`, a
// here-document fed to a shell) are looked into for deny rules.
const maxDepth = 4

// maxWrapped bounds how many words after a wrapper such as `sudo` are
// tried as the start of the command it runs.
const maxWrapped = 32

// Set is the command rules in force. Allow holds allow rules and Deny
// deny rules; a rule in the wrong list is ignored.
type Set struct {
	Allow []Rule
	Deny  []Rule
}

// Match is what a [Set] says about one command line.
type Match struct {
	// Denied is set when a simple command of the line matches a deny
	// rule: Rule is that rule's pattern and Command the simple command
	// as written. A denied line is never Allowed.
	Denied  bool
	Rule    string
	Command string
	// Allowed is set when the line is made only of simple commands of
	// literal words (see the package doc), each covered by an allow
	// rule; AllowedBy lists the patterns of those rules.
	Allowed   bool
	AllowedBy []string
	// Propose lists, for a line that is not allowed but could be, the
	// exact allow patterns that would let it run without asking: one
	// for each simple command no rule covers yet. It is nil when no
	// allow rule can ever cover the line.
	Propose []string
	// Err says why the line could not be parsed (or was too long to
	// check): it then matches no rule at all, deny rules included, and
	// the caller decides what an unchecked line may do.
	Err error
}

// Check matches command against the set: deny rules first (a denied
// line is never allowed), then allow rules. It never panics.
func (s Set) Check(command string) Match {
	if len(command) > MaxCommand {
		return Match{Err: fmt.Errorf("the command is %d bytes long, more than the %d checked against command rules", len(command), MaxCommand)}
	}
	f, err := shellword.Parse(command)
	if err != nil {
		return Match{Err: err}
	}
	r, cmd, ok, opaque := s.denied(f, command, 0)
	switch {
	case ok:
		return Match{Denied: true, Rule: r.Pattern(), Command: cmd}
	case opaque != "":
		return Match{Err: errors.New(opaque)}
	}
	cmds, ok := literalCommands(f)
	if !ok {
		return Match{}
	}
	m := Match{Allowed: true}
	proposable := true
	for _, ws := range cmds {
		if r, ok := s.allows(ws); ok {
			m.AllowedBy = appendNew(m.AllowedBy, r.Pattern())
			continue
		}
		m.Allowed = false
		r, ok := exact(ws)
		if !ok {
			proposable = false
			continue
		}
		m.Propose = appendNew(m.Propose, r.Pattern())
	}
	switch {
	case m.Allowed:
		m.Propose = nil
	case !proposable:
		m.AllowedBy, m.Propose = nil, nil
	default:
		m.AllowedBy = nil
	}
	return m
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// allows returns the first allow rule covering the literal words ws.
func (s Set) allows(ws []string) (Rule, bool) {
	words := make([]word, len(ws))
	for i, w := range ws {
		words[i] = word{s: w}
	}
	for _, r := range s.Allow {
		if r.kind == Allow && r.matches(words) {
			return r, true
		}
	}
	return Rule{}, false
}

// literalCommands returns the words of each simple command of f when f is
// nothing but simple commands of literal words joined by ; && || | or |&,
// with no redirection but to /dev/null or between descriptors.
func literalCommands(f *syntax.File) ([][]string, bool) {
	var out [][]string
	for _, st := range f.Stmts {
		if !stmtCommands(st, &out) {
			return nil, false
		}
	}
	return out, len(out) > 0
}

func stmtCommands(st *syntax.Stmt, out *[][]string) bool {
	if st.Negated || st.Background || st.Coprocess || st.Disown {
		return false
	}
	for _, r := range st.Redirs {
		if !harmless(r) {
			return false
		}
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			return false
		}
		ws := make([]string, len(c.Args))
		for i, w := range c.Args {
			s, ok := wordValue(w, false)
			if !ok {
				return false
			}
			ws[i] = s
		}
		*out = append(*out, ws)
		return true
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt, syntax.Pipe, syntax.PipeAll:
			return stmtCommands(c.X, out) && stmtCommands(c.Y, out)
		}
	}
	return false
}

// harmless reports a redirection that reads or writes no file: to or
// from /dev/null, or joining or closing descriptors (2>&1, >&-).
func harmless(r *syntax.Redirect) bool {
	if r.Hdoc != nil || r.Word == nil || (r.N != nil && !digits(r.N.Value)) {
		return false
	}
	target, ok := wordValue(r.Word, false)
	if !ok {
		return false
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrIn:
		return target == "/dev/null"
	case syntax.DplOut, syntax.DplIn:
		return digits(target) || target == "-"
	}
	return false
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// shells run the script given with -c.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "fish": true,
}

// denied walks every simple command of f, src's parse, wherever it sits,
// and the literal scripts run through a shell or eval or printed into a
// shell's input, for a deny rule. When code it cannot read runs (computed
// text piped into a shell, an interpreter's -c or -e program) and no rule
// denies the line, opaque says why the line cannot be judged: it then
// asks.
func (s Set) denied(f *syntax.File, src string, depth int) (hit Rule, where string, found bool, opaque string) {
	if len(s.Deny) == 0 {
		return Rule{}, "", false, ""
	}
	nested := func(script string) {
		if found || depth >= maxDepth {
			return
		}
		if g, err := shellword.Parse(script); err == nil {
			var why string
			hit, where, found, why = s.denied(g, script, depth+1)
			if opaque == "" {
				opaque = why
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			script, why := pipedCode(n)
			if script != "" {
				nested(script)
			} else if why != "" && opaque == "" {
				opaque = why
			}
		case *syntax.Stmt:
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				for _, script := range fedScripts(call, n.Redirs) {
					nested(script)
				}
			}
			if _, _, inline := readsCode(n); inline && opaque == "" {
				opaque = "the command runs an interpreter's own code (-c or -e), which cannot be checked against the deny rules"
			}
		case *syntax.CallExpr:
			ws := callWords(n)
			if r, ok := s.denyWords(ws); ok {
				hit, where, found = r, snippet(src, n), true
				return false
			}
			for _, script := range scripts(ws) {
				nested(script)
			}
		}
		return !found
	})
	return hit, where, found, opaque
}

// snippet is the source text of node n of src.
func snippet(src string, n syntax.Node) string {
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if a < 0 || b > len(src) || a >= b {
		return ""
	}
	return src[a:b]
}

// callWords are a simple command's words for a deny check.
func callWords(c *syntax.CallExpr) []word {
	ws := make([]word, len(c.Args))
	for i, w := range c.Args {
		s, ok := wordValue(w, true)
		ws[i] = word{s: s, unknown: !ok}
	}
	return ws
}

// starts returns where in ws a command may begin: at 0, and after a
// wrapper (sudo, timeout 5, env -i, xargs, find … -exec) at every word
// that follows it.
func starts(ws []word) []int {
	if len(ws) == 0 {
		return nil
	}
	out := []int{0}
	if ws[0].unknown {
		return out
	}
	if b := path.Base(ws[0].s); runners[b] || b == "find" {
		for k := 1; k < len(ws) && k <= maxWrapped; k++ {
			out = append(out, k)
		}
	}
	return out
}

// denyWords returns the first deny rule the words of one simple command
// meet, from any of its starts.
func (s Set) denyWords(ws []word) (Rule, bool) {
	for _, k := range starts(ws) {
		for _, r := range s.Deny {
			if r.kind == Deny && r.matches(ws[k:]) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// scripts returns the literal scripts a simple command runs through a
// shell's -c or through eval.
func scripts(ws []word) []string {
	var out []string
	for _, k := range starts(ws) {
		if ws[k].unknown {
			continue
		}
		rest := ws[k+1:]
		switch b := path.Base(ws[k].s); {
		case b == "eval":
			parts := make([]string, 0, len(rest))
			for _, w := range rest {
				if w.unknown {
					parts = nil
					break
				}
				parts = append(parts, w.s)
			}
			if len(parts) > 0 {
				out = append(out, strings.Join(parts, " "))
			}
		case shells[b]:
			if s, ok := dashC(rest); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// dashC returns the script of a shell's arguments: the first word that
// is not an option, after an option cluster holding c (-c, -ec, -lc).
func dashC(args []word) (string, bool) {
	c := false
	for _, w := range args {
		switch {
		case w.unknown:
			return "", false
		case w.s == "--":
			continue
		case strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--"):
			c = c || strings.Contains(w.s, "c")
		case strings.HasPrefix(w.s, "+") || strings.HasPrefix(w.s, "--"):
		default:
			return w.s, c
		}
	}
	return "", false
}

// fedScripts returns the literal here-documents and here-strings fed to
// a shell that reads its script from standard input.
func fedScripts(c *syntax.CallExpr, redirs []*syntax.Redirect) []string {
	if len(c.Args) == 0 {
		return nil
	}
	ws := callWords(c)
	shell := false
	for _, k := range starts(ws) {
		if !ws[k].unknown && shells[path.Base(ws[k].s)] {
			shell = true
		}
	}
	if !shell {
		return nil
	}
	var out []string
	for _, r := range redirs {
		var body *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body = r.Hdoc
		case syntax.WordHdoc:
			body = r.Word
		}
		if body == nil {
			continue
		}
		var b strings.Builder
		literal := true
		for _, p := range body.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				for _, in := range p.Parts {
					if l, ok := in.(*syntax.Lit); ok {
						b.WriteString(shellword.Unescape(l.Value, true))
					} else {
						literal = false
					}
				}
			default:
				literal = false
			}
		}
		if literal {
			out = append(out, b.String())
		}
	}
	return out
}
