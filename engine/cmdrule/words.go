package cmdrule

import (
	"strings"
	"unicode"

	"github.com/tally-dev/tally/internal/shellword"
	"mvdan.cc/sh/v3/syntax"
)

// simpleCall returns the simple command of a pattern's statement, or why
// the statement is not one, such as "sets a variable".
func simpleCall(st *syntax.Stmt) (*syntax.CallExpr, string) {
	switch {
	case st.Negated:
		return nil, "starts with !"
	case st.Background || st.Coprocess || st.Disown:
		return nil, "runs in the background"
	case len(st.Redirs) > 0:
		return nil, "has a redirection"
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	switch {
	case !ok:
		return nil, "is not a simple command (a pipeline, list, subshell, block or keyword)"
	case len(call.Assigns) > 0:
		return nil, "sets a variable"
	}
	return call, ""
}

// isStar reports whether w is an unquoted `*` alone.
func isStar(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && l.Value == "*"
}

// claudeStar reads a last word in the form `lint:*`: it returns the word
// without the unquoted ":*" ending (deny as for [wordValue]).
func claudeStar(w *syntax.Word, deny bool) (string, bool) {
	l, ok := w.Parts[len(w.Parts)-1].(*syntax.Lit)
	if !ok || !strings.HasSuffix(l.Value, ":*") || strings.HasSuffix(l.Value, `\:*`) {
		return "", false
	}
	cut := &syntax.Lit{Value: strings.TrimSuffix(l.Value, ":*")}
	parts := append(append([]syntax.WordPart(nil), w.Parts[:len(w.Parts)-1]...), cut)
	if cut.Value == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return "", true
	}
	return wordValue(&syntax.Word{Parts: parts}, deny)
}

// wordValue returns the word as the program receives it, after quote
// removal, when the shell computes nothing in it: only plain text and
// single or double quotes without expansions. Unquoted glob characters,
// braces and ~ make it computed; for a deny check (deny set) ~ and braces
// that do not expand stay as written, so a deny rule may name `rm -rf ~`
// and meet `find . -exec rm {} +`.
func wordValue(w *syntax.Word, deny bool) (string, bool) {
	var b strings.Builder
	braces := false
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			ok, brace := unquoted(&b, p.Value, deny)
			if !ok {
				return "", false
			}
			braces = braces || brace
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, in := range p.Parts {
				l, ok := in.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(shellword.Unescape(l.Value, true))
			}
		default:
			return "", false
		}
	}
	if braces {
		return "", false
	}
	return b.String(), true
}

// unquoted writes the value of unquoted text s: a backslash keeps the
// next character as it is. It returns false at a character the shell
// would expand; with deny, ~ and braces are written as they are, and
// brace reports an unquoted { with a , or .. that may expand.
func unquoted(b *strings.Builder, s string, deny bool) (ok, brace bool) {
	open, list := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(c)
		case c == '*' || c == '?' || c == '[':
			return false, false
		case c == '{' || c == '}' || c == '~':
			if !deny {
				return false, false
			}
			open = open || c == '{'
			b.WriteByte(c)
		case c == ',' || (c == '.' && i+1 < len(s) && s[i+1] == '.'):
			list = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return true, open && list
}

// special holds the characters that keep a word from being written bare.
const special = " \t\r\n;&|<>()$`\\\"'*?[]{}~#!="

// reserved are the words the shell reads as syntax at a command's start.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true,
	"select": true, "function": true, "time": true, "coproc": true, "{": true, "}": true,
	"[[": true, "]]": true, "!": true, "declare": true, "local": true, "export": true,
	"readonly": true, "typeset": true, "nameref": true, "let": true,
}

// quote writes w so that the shell reads it back as the one word w, in
// single quotes where needed; first says w is a command's name.
func quote(w string, first bool) string {
	if strings.IndexFunc(w, unicode.IsSpace) >= 0 {
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	if w != "" && !strings.ContainsAny(w, special) && !(first && reserved[w]) {
		return w
	}
	if w != "" && !strings.ContainsAny(w, special[:len(special)-1]) && !first {
		return w // "=" is plain text after the command's name
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
