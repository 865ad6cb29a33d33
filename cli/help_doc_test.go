package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryHelpCommandAndFlagIsDocumented holds docs/cli.md to `tally
// help`: every command the help lists (its first word after "tally") and
// every flag it names is documented there, and the README does not keep a
// second command table of its own.
func TestEveryHelpCommandAndFlagIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands, flags := helpWords(Usage)
	if len(commands) < 15 || len(flags) < 10 {
		t.Fatalf("read %d commands and %d flags from the help; has its layout changed?", len(commands), len(flags))
	}
	for _, c := range commands {
		if !strings.Contains(string(doc), "tally "+c) {
			t.Errorf("`tally %s` is in tally help but not in docs/cli.md", c)
		}
	}
	for _, f := range flags {
		if !regexp.MustCompile(regexp.QuoteMeta(f) + `\b`).Match(doc) {
			t.Errorf("%s is in tally help but not in docs/cli.md", f)
		}
	}
	if rows := regexp.MustCompile(`(?m)^tally [a-z]+ `).FindAll(readme, -1); len(rows) > 3 {
		t.Errorf("the README lists %d command lines; the command reference is docs/cli.md, once", len(rows))
	}
}

// helpWords returns the commands (first word after "tally" at the start
// of a help line) and the flags (--name) of help, each once, sorted.
func helpWords(help string) (commands, flags []string) {
	cmd := regexp.MustCompile(`(?m)^\s+tally ([a-z]+)`)
	for _, m := range cmd.FindAllStringSubmatch(help, -1) {
		if !slices.Contains(commands, m[1]) {
			commands = append(commands, m[1])
		}
	}
	for _, f := range regexp.MustCompile(`--[a-z][a-z-]*`).FindAllString(help, -1) {
		if !slices.Contains(flags, f) {
			flags = append(flags, f)
		}
	}
	slices.Sort(commands)
	slices.Sort(flags)
	return commands, flags
}
