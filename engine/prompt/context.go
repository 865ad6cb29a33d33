package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/memory"
	"github.com/tally-dev/tally/engine/secrets"
	filetool "github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/safefile"
)

// Limits of the workspace context pack.
const (
	MaxContextFileBytes = 16 << 10 // each AGENTS.md (and each include) is cut here
	MaxContextBytes     = 64 << 10 // all instructions together, includes counted
	MaxIncludeDepth     = 5        // @path includes nest at most this deep
	MaxListingEntries   = 80       // top-level entries shown in the layout section
)

// ContextFileName is the instructions file looked up in the user config
// dir and the workspace root.
const ContextFileName = "AGENTS.md"

// ContextPack is what Tally reads from disk about a workspace, once, when a
// session starts. It carries no timestamps and no git state, so it does not
// change while nothing on disk changes.
type ContextPack struct {
	Instructions string   // merged AGENTS.md text, most general first
	Sources      []string // the files merged, in order
	Listing      string   // sorted, bounded top-level listing
	// Redacted counts the secrets replaced by markers in the instructions.
	Redacted int
	// Refused lists the includes refused because they name a secret file
	// (on the deny list, or inside .git), as written after the "@".
	Refused []string
	// Skills is the skills catalog's section text (names and
	// descriptions, see package skill); "" for none. The caller sets it.
	Skills string
	// Agents is the section listing the custom sub-agents; "" for none.
	// The caller sets it.
	Agents string
	// Memory is the section of the memory entries the user accepted, the
	// project's and their own (see package memory); "" for none.
	Memory string
}

// ContextOptions tune [LoadContextWith].
type ContextOptions struct {
	// UserDir is the user's Tally config directory; "" skips it.
	UserDir string
	// SecretFiles is the secret-file deny list the file tools use (see
	// [filetool.DefaultSecretFiles] for its form); nil means that default list
	// and an empty list denies nothing.
	SecretFiles []string
}

// Sections returns the pack as workspace-tier prompt sections.
func (p ContextPack) Sections() []Section {
	var out []Section
	if p.Instructions != "" {
		out = append(out, Section{Name: "project_instructions", Tier: Workspace,
			Text: "# Project instructions (AGENTS.md)\n" + p.Instructions})
	}
	if p.Skills != "" {
		out = append(out, Section{Name: "skills", Tier: Workspace, Text: p.Skills})
	}
	if p.Agents != "" {
		out = append(out, Section{Name: "custom_subagents", Tier: Workspace, Text: p.Agents})
	}
	if p.Listing != "" {
		out = append(out, Section{Name: "workspace_layout", Tier: Workspace,
			Text: "# Workspace layout (top level)\n" + p.Listing})
	}
	if p.Memory != "" { // last of its tier: accepting an entry leaves the rest cached
		out = append(out, Section{Name: "memory", Tier: Workspace, Text: p.Memory})
	}
	return out
}

// LoadContext reads the context pack for workspace with the default
// secret-file deny list; see [LoadContextWith].
func LoadContext(workspace, userDir string) ContextPack {
	return LoadContextWith(workspace, ContextOptions{UserDir: userDir})
}

// LoadContextWith reads the context pack for workspace. The user's
// AGENTS.md (in opt.UserDir) comes first, then the workspace root's. The
// memory entries the user accepted (memory.Section: the workspace's
// .tally/memory.md and opt.UserDir's memory.md) are read here too, so, like
// AGENTS.md, a session sees those of its start and never a later change.
//
// A repository is untrusted, so every file read here stays inside its own
// root (the workspace, or the user's config directory for the user's file
// and its includes) whatever symlinks or "@../x" and "@/abs" includes say;
// AGENTS.md itself and every include must be a regular file, not a symlink,
// FIFO or device; each is cut at MaxContextFileBytes and all together at
// MaxContextBytes. Includes get the same guards as the read_file tool: one
// on the secret-file deny list (by its path or the path its folders' links
// lead to) or inside .git is never read and becomes a one-line note, and the
// secrets in every file read are redacted (see [secrets.Redact]). The text
// is neutralised (see transcript.Neutralize) so it cannot open or close an
// engine block. Unreadable files are skipped and refused includes are
// marked in place; nothing here fails the session.
func LoadContextWith(workspace string, opt ContextOptions) ContextPack {
	var pack ContextPack
	abs, err := filepath.Abs(workspace)
	if err != nil {
		abs = workspace
	}
	deny := opt.SecretFiles
	if deny == nil {
		deny = filetool.DefaultSecretFiles()
	}
	var parts []string
	budget := MaxContextBytes
	for _, dir := range []string{opt.UserDir, abs} {
		if dir == "" || budget <= 0 {
			continue
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			continue
		}
		r := includer{root: root, dir: dir, budget: &budget, deny: deny, pack: &pack}
		text, ok := r.read(ContextFileName)
		if ok {
			text = r.expand(text, ".", 1, map[string]bool{ContextFileName: true})
			f := filepath.Join(dir, ContextFileName)
			pack.Sources = append(pack.Sources, f)
			parts = append(parts, fmt.Sprintf("## From %s\n%s", transcript.NeutralizeLine(displayPath(f, abs)), strings.TrimSpace(text)))
		}
		root.Close()
	}
	pack.Instructions = transcript.Neutralize(strings.Join(parts, "\n\n"))
	pack.Listing = listing(abs)
	pack.Memory = memory.Section(abs, opt.UserDir)
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

// includer reads AGENTS.md and its includes inside one root.
type includer struct {
	root   *os.Root
	dir    string // the root's path, to accept absolute includes inside it
	budget *int   // bytes left for all instructions
	deny   []string
	pack   *ContextPack // counts redactions and refusals
}

// secretSlack is how many bytes past a file's cut are read and scanned for
// secrets, so a secret straddling the cut is replaced whole.
const secretSlack = 512

// read returns the text of name (relative to the root) with its secrets
// redacted, cut at MaxContextFileBytes and at what is left of the budget.
func (r includer) read(name string) (string, bool) {
	limit := min(MaxContextFileBytes, *r.budget)
	data, cut, err := safefile.ReadIn(r.root, name, int64(limit+secretSlack))
	if err != nil {
		return "", false
	}
	text, findings := secrets.Redact(strings.ToValidUTF8(string(data), "\uFFFD"))
	for _, f := range findings {
		r.pack.Redacted += f.Count
	}
	if len(text) > limit {
		text, cut = cutAt(text, limit), true
	}
	*r.budget -= len(text)
	if cut {
		text += fmt.Sprintf("\n[... cut at %d KB ...]", limit>>10)
	}
	return text, true
}

// cutAt shortens s to at most n bytes at a rune boundary.
func cutAt(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// secret says why the include rel (relative to the root) must not be
// read, or "" when it may: it is inside .git, or it or the path its
// folders' symlinks lead to is on the secret-file deny list.
func (r includer) secret(rel string) string {
	for _, p := range []string{rel, r.resolved(rel)} {
		if p == "" {
			continue
		}
		slash := filepath.ToSlash(p)
		if slash == ".git" || strings.HasPrefix(slash, ".git/") || strings.Contains(slash, "/.git/") {
			return "inside the .git folder"
		}
		if filetool.MatchSecretFile(r.deny, slash) {
			return "on the secret-file deny list"
		}
	}
	return ""
}

// resolved returns rel with the symlinks of its folders followed, relative
// to the root, or "" when that fails or leaves the root.
func (r includer) resolved(rel string) string {
	base, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		return ""
	}
	parent, err := filepath.EvalSymlinks(filepath.Join(r.dir, filepath.Dir(rel)))
	if err != nil {
		return ""
	}
	out, err := filepath.Rel(base, filepath.Join(parent, filepath.Base(rel)))
	if err != nil || !filepath.IsLocal(out) {
		return ""
	}
	return out
}

var includeRe = regexp.MustCompile(`(?m)^@(\S+)\s*$`)

// expand replaces lines of the form "@relative/path" with the contents of
// that file, up to MaxIncludeDepth levels and never a file twice in one
// chain. dir is the including file's directory, relative to the root.
func (r includer) expand(text, dir string, depth int, seen map[string]bool) string {
	return includeRe.ReplaceAllStringFunc(text, func(line string) string {
		rel, ok := r.relative(strings.TrimSpace(line[1:]), dir)
		switch {
		case !ok:
			return line + " (not included: outside the folder of this AGENTS.md)"
		case depth > MaxIncludeDepth:
			return line + " (not included: more than 5 levels of @includes)"
		case seen[rel]:
			return line + " (not included: include cycle)"
		case *r.budget <= 0:
			return line + fmt.Sprintf(" (not included: instructions exceed %d KB)", MaxContextBytes>>10)
		}
		if why := r.secret(rel); why != "" {
			target := strings.TrimSpace(line[1:])
			r.pack.Refused = append(r.pack.Refused, target)
			return fmt.Sprintf("[include @%s refused: %s]", target, why)
		}
		body, ok := r.read(rel)
		if !ok {
			return line + " (not found)"
		}
		next := map[string]bool{rel: true}
		for k := range seen {
			next[k] = true
		}
		return strings.TrimSpace(r.expand(body, filepath.Dir(rel), depth+1, next))
	})
}

// relative turns an include target into a clean path relative to the
// root, or reports false when it would leave the root.
func (r includer) relative(p, dir string) (string, bool) {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(r.dir, p)
		if err != nil {
			return "", false
		}
		p = rel
	} else {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if !filepath.IsLocal(p) {
		return "", false
	}
	return p, true
}

func listing(workspace string) string {
	entries, err := os.ReadDir(workspace)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		n := transcript.NeutralizeLine(e.Name())
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
