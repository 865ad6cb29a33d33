// Package shellword is the one place where Tally reads a command line as
// bash: command rules judge the words a command runs with, and workspace
// trust hashes the files a hook or MCP server command names. Both parse
// with mvdan.cc/sh and remove quotes by the rules here, so a path such as
// "tools/my hook.sh" means the same file to both.
package shellword

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Parse parses src as bash, the shell run_shell and hooks use. A panic of
// the parser, which should not happen, is returned as an error, so no
// command line can crash Tally.
func Parse(src string) (f *syntax.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the shell parser failed on this command line (%v); write it more simply", r)
		}
	}()
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// Unescape removes the backslashes bash removes from literal text: before
// any character outside quotes (quoted false), and only before $ ` " \
// and a newline inside double quotes (quoted true). An escaped newline
// joins lines and leaves nothing. A trailing lone backslash is kept.
func Unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
