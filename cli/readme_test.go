package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestReadmeIntroducesTheScriptedServerAndAskMode holds the README to
// what a newcomer needs and the length it keeps: under 400 lines, it
// names scripts/llmtestd (with the flags the program has) and why "Ask me
// first" may never ask, each linking the section of the guide that says
// more; every link of the README into a guide's section finds its heading.
func TestReadmeIntroducesTheScriptedServerAndAskMode(t *testing.T) {
	read := func(p string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	readme := read("README.md")
	if n := strings.Count(readme, "\n"); n >= 400 {
		t.Errorf("the README has %d lines; keep it under 400 and move details to docs/", n)
	}
	words := strings.Join(strings.Fields(readme), " ")
	for _, want := range []string{
		"go run ./scripts/llmtestd --workspace", "(docs/models.md#a-scripted-server-to-try-tally-against)",
		"*Ask me first*", "pays for the cache misses", "(docs/compaction.md#ask-me-first-and-the-pay-off-rule)",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
	server := read("scripts/llmtestd/main.go")
	models := read("docs/models.md")
	for _, flag := range regexp.MustCompile("`(--[a-z]+)").FindAllStringSubmatch(section(models, "## A scripted server"), -1) {
		if !regexp.MustCompile(`flag\.[A-Za-z]+\("` + flag[1][2:] + `"`).MatchString(server) {
			t.Errorf("docs/models.md gives scripts/llmtestd the flag %s, which it does not have", flag[1])
		}
	}
	for _, link := range regexp.MustCompile(`\]\((docs/[a-z-]+\.md)#([a-z0-9-]+)\)`).FindAllStringSubmatch(readme, -1) {
		found := false
		for _, line := range strings.Split(read(link[1]), "\n") {
			if strings.HasPrefix(line, "#") && slug(strings.TrimLeft(line, "# ")) == link[2] {
				found = true
			}
		}
		if !found {
			t.Errorf("the README links %s#%s, which has no such heading", link[1], link[2])
		}
	}
}

// section is the text of doc from the heading that starts with heading
// to the next heading of any level.
func section(doc, heading string) string {
	i := strings.Index(doc, "\n"+heading)
	if i < 0 {
		return ""
	}
	rest := doc[i+1:]
	if j := strings.Index(rest[1:], "\n#"); j >= 0 {
		return rest[:j+1]
	}
	return rest
}

// slug is a heading's anchor as GitHub makes it: lower case, spaces as
// hyphens, other punctuation dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
