package cmdrule

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// interpreters run a program given with -c or -e, or read from standard
// input when given no script file; code in their languages cannot be
// checked against deny rules written for shell commands.
var interpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "perl": true, "ruby": true, "node": true,
	"php": true, "lua": true, "tclsh": true,
}

// interpreter reports whether base names one of interpreters (python3.12
// too).
func interpreter(base string) bool {
	if interpreters[base] {
		return true
	}
	return strings.HasPrefix(base, "python") && strings.Trim(strings.TrimPrefix(base, "python"), "0123456789.") == ""
}

// readsCode tells what the simple command of st runs as code besides its
// words: fromStdin when it is a shell or an interpreter with no script
// given (or "-"), which runs what a pipe feeds it; inline when it is an
// interpreter given its code with -c or -e.
func readsCode(st *syntax.Stmt) (fromStdin, shell, inline bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return false, false, false
	}
	ws := callWords(call)
	for _, k := range starts(ws) {
		if ws[k].unknown {
			continue
		}
		b := path.Base(ws[k].s)
		isShell, isInterp := shells[b], interpreter(b)
		if !isShell && !isInterp {
			continue
		}
		script := false
		for _, w := range ws[k+1:] {
			switch {
			case w.unknown:
				script = true
			case w.s == "-":
			case strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--"):
				if isInterp && strings.ContainsAny(strings.TrimPrefix(w.s, "-"), "ce") {
					return false, false, true
				}
				if isShell && strings.Contains(w.s, "c") {
					script = true // judged as the -c script it runs
				}
			case strings.HasPrefix(w.s, "--"):
			default:
				script = true
			}
			if script {
				break
			}
		}
		if !script {
			return true, isShell, false
		}
	}
	return false, false, false
}

// printed returns the text a simple command of literal words prints when
// it is echo or printf, for judging what it feeds a shell.
func printed(st *syntax.Stmt) (string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) < 2 || len(st.Redirs) > 0 {
		return "", false
	}
	ws := make([]string, len(call.Args))
	for i, w := range call.Args {
		s, ok := wordValue(w, true)
		if !ok {
			return "", false
		}
		ws[i] = s
	}
	switch path.Base(ws[0]) {
	case "echo":
		rest := ws[1:]
		for len(rest) > 0 && (rest[0] == "-n" || rest[0] == "-e" || rest[0] == "-E") {
			rest = rest[1:]
		}
		return strings.Join(rest, " "), true
	case "printf":
		return strings.ReplaceAll(strings.Join(ws[1:], " "), `\n`, "\n"), true
	}
	return "", false
}

// pipedCode looks at a pipe for code fed through it: it returns the
// script a shell on its right runs when its left prints literal text, or
// why the code cannot be judged ("" when the pipe feeds no code).
func pipedCode(b *syntax.BinaryCmd) (script, opaque string) {
	if b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
		return "", ""
	}
	fromStdin, shell, _ := readsCode(b.Y)
	if !fromStdin {
		return "", ""
	}
	if text, ok := printed(b.X); ok && shell {
		return text, ""
	}
	return "", "the command pipes computed text into a shell or an interpreter, whose code cannot be checked against the deny rules"
}
