package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Limits of the workspace context pack.
const (
	MaxContextFileBytes = 16 << 10 // each AGENTS.md (and each include) is cut here
	MaxIncludeDepth     = 5        // @path includes nest at most this deep
	MaxListingEntries   = 80       // top-level entries shown in the layout section
)

// ContextFileName is the instructions file looked up in the user config
// dir, the workspace's parents and the workspace root.
const ContextFileName = "AGENTS.md"

// ContextPack is what Tally reads from disk about a workspace, once, when a
// session starts. It carries no timestamps and no git state, so it does not
// change while nothing on disk changes.
type ContextPack struct {
	Instructions string   // merged AGENTS.md text, most general first
	Sources      []string // the files merged, in order
	Listing      string   // sorted, bounded top-level listing
}

// Sections returns the pack as workspace-tier prompt sections.
func (p ContextPack) Sections() []Section {
	var out []Section
	if p.Instructions != "" {
		out = append(out, Section{Name: "project_instructions", Tier: Workspace,
			Text: "# Project instructions (AGENTS.md)\n" + p.Instructions})
	}
	if p.Listing != "" {
		out = append(out, Section{Name: "workspace_layout", Tier: Workspace,
			Text: "# Workspace layout (top level)\n" + p.Listing})
	}
	return out
}

// LoadContext reads the context pack for workspace. userDir is the user's
// Tally config directory ("" to skip it). Files are merged in a fixed order:
// the user's file, then the workspace's ancestors from the outermost down,
// then the workspace root. Unreadable files are skipped; nothing here fails
// the session.
func LoadContext(workspace, userDir string) ContextPack {
	var pack ContextPack
	var files []string
	if userDir != "" {
		files = append(files, filepath.Join(userDir, ContextFileName))
	}
	abs, err := filepath.Abs(workspace)
	if err == nil {
		var chain []string
		for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
			chain = append(chain, filepath.Join(dir, ContextFileName))
			if dir == filepath.Dir(dir) {
				break
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			files = append(files, chain[i])
		}
		files = append(files, filepath.Join(abs, ContextFileName))
	}
	var parts []string
	for _, f := range files {
		text, ok := readBounded(f)
		if !ok {
			continue
		}
		text = expandIncludes(text, filepath.Dir(f), 1, map[string]bool{f: true})
		pack.Sources = append(pack.Sources, f)
		parts = append(parts, fmt.Sprintf("## From %s\n%s", displayPath(f, abs), strings.TrimSpace(text)))
	}
	pack.Instructions = strings.Join(parts, "\n\n")
	pack.Listing = listing(abs)
	return pack
}

func displayPath(f, workspace string) string {
	if rel, err := filepath.Rel(workspace, f); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	if home, err := os.UserHomeDir(); err == nil && strings.HasPrefix(f, home+string(filepath.Separator)) {
		return "~/" + filepath.ToSlash(f[len(home)+1:])
	}
	return filepath.ToSlash(f)
}

func readBounded(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	buf := make([]byte, MaxContextFileBytes+1)
	n, _ := f.Read(buf)
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	text := string(buf[:min(n, MaxContextFileBytes)])
	if n > MaxContextFileBytes {
		text += "\n[... cut at 16 KB ...]"
	}
	return text, true
}

var includeRe = regexp.MustCompile(`(?m)^@(\S+)\s*$`)

// expandIncludes replaces lines of the form "@relative/path" with the
// contents of that file, up to MaxIncludeDepth levels and never a file twice
// in one chain.
func expandIncludes(text, dir string, depth int, seen map[string]bool) string {
	return includeRe.ReplaceAllStringFunc(text, func(line string) string {
		rel := strings.TrimSpace(line[1:])
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if depth > MaxIncludeDepth {
			return line + " (not included: more than 5 levels of @includes)"
		}
		if seen[p] {
			return line + " (not included: include cycle)"
		}
		body, ok := readBounded(p)
		if !ok {
			return line + " (not found)"
		}
		next := map[string]bool{p: true}
		for k := range seen {
			next[k] = true
		}
		return strings.TrimSpace(expandIncludes(body, filepath.Dir(p), depth+1, next))
	})
}

func listing(workspace string) string {
	entries, err := os.ReadDir(workspace)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if n == ".git" {
			continue
		}
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	extra := 0
	if len(names) > MaxListingEntries {
		extra = len(names) - MaxListingEntries
		names = names[:MaxListingEntries]
	}
	out := strings.Join(names, "\n")
	if extra > 0 {
		out += fmt.Sprintf("\n(and %d more)", extra)
	}
	return out
}
