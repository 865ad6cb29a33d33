package tool

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

//go:embed grep.md
var grepDoc string

// GrepParams are the arguments of grep.
type GrepParams struct {
	// Pattern is a Go (RE2) regular expression matched against each line.
	Pattern string `json:"pattern"`
	// Path is the file or directory searched, relative to the workspace
	// root; empty means ".".
	Path string `json:"path,omitempty"`
	// Glob optionally filters files by base name ("*.go"), or by
	// workspace-relative path when it contains "/".
	Glob string `json:"glob,omitempty"`
	// MaxResults bounds the matching lines shown; zero means 100, and
	// values above 500 are lowered to 500.
	MaxResults int `json:"max_results,omitempty"`
}

// Limits of grep.
const (
	GrepDefaultResults = 100
	GrepMaxResults     = 500
	// GrepMaxFileSize is the size above which files are skipped.
	GrepMaxFileSize = 2 << 20
	// GrepMaxLineLen is the number of bytes of a matching line shown.
	GrepMaxLineLen = 300
)

var grepSpec = Spec{
	Name:        "grep",
	Description: strings.TrimSpace(grepDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"pattern": {"type": "string", "description": "Go (RE2) regular expression matched against each line."},
			"path": {"type": "string", "description": "File or directory relative to the workspace root. Default \".\"."},
			"glob": {"type": "string", "description": "Optional file name filter, such as \"*.go\"; one with a / is matched against the workspace-relative path."},
			"max_results": {"type": "integer", "minimum": 1, "maximum": 500, "description": "Maximum matching lines to show. Default 100."}
		},
		"required": ["pattern"],
		"additionalProperties": false
	}`),
}

type grepTool struct{}

// Grep returns the grep tool: it searches workspace files line by line with
// a Go regular expression and reports "path:line: text" sorted by path and
// line, skipping binary files, files over 2 MB and .git. It does not need
// approval.
func Grep() Tool { return grepTool{} }

func (grepTool) Spec() Spec          { return grepSpec }
func (grepTool) NeedsApproval() bool { return false }

func (grepTool) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "grep"
	var p GrepParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	if p.Pattern == "" {
		return errorf(name, "pattern is missing; pass a Go regular expression to search for")
	}
	re, err := regexp.Compile(p.Pattern)
	if err != nil {
		return errorf(name, "pattern %q is not a valid Go regular expression (%v); fix it, escaping special characters such as ( [ . with a backslash", p.Pattern, err)
	}
	if p.Glob != "" {
		if _, err := path.Match(p.Glob, ""); err != nil {
			return errorf(name, "glob %q is not a valid file pattern; use a pattern such as \"*.go\"", p.Glob)
		}
	}
	if p.MaxResults < 0 {
		return errorf(name, "max_results %d is negative; pass a number between 1 and %d", p.MaxResults, GrepMaxResults)
	}
	maxResults := p.MaxResults
	if maxResults == 0 {
		maxResults = GrepDefaultResults
	}
	maxResults = min(maxResults, GrepMaxResults)
	if p.Path == "" {
		p.Path = "."
	}
	w, err := openWorkspace(env, p.Path)
	if err != nil {
		return errResult(name, err)
	}
	defer w.Close()
	rel, fname, err := w.confine(p.Path)
	if err != nil {
		return errResult(name, err)
	}
	fi, used, err := w.stat(fname)
	if err != nil {
		return errorf(name, "%s", describeStatError(rel, err))
	}

	var res Result
	g := grepper{re: re, glob: p.Glob, max: maxResults, w: w, secrets: env.secretFiles(), res: &res}
	if fi.IsDir() {
		// Walk through the root: a directory swapped for a symlink
		// meanwhile is not followed out of the workspace, and symlinked
		// directories are not descended.
		top := filepath.ToSlash(used)
		realTop := top
		if r, err := w.resolve(used); err == nil {
			realTop = filepath.ToSlash(r)
		}
		err = fs.WalkDir(w.root.FS(), top, func(p string, d fs.DirEntry, err error) error {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if err != nil {
				return nil // unreadable entries are skipped
			}
			if g.full {
				return fs.SkipAll
			}
			if d.IsDir() {
				if d.Name() == ".git" && p != top {
					return fs.SkipDir
				}
				return nil
			}
			below := belowTop(top, p)
			g.file(filepath.FromSlash(p), joinRel(rel, below), joinRel(realTop, below), d)
			return nil
		})
		if err != nil && ctx.Err() != nil {
			return errorf(name, "the search was cancelled; call again with a narrower path if still needed")
		}
	} else {
		if what, secret := w.secretPath(env, rel, fname); secret && !secretReadAllowed(ctx) {
			return refuseSecret(name, what, "searched", "search")
		}
		g.search(used, rel, fi)
	}

	res.Paths = g.paths
	var b strings.Builder
	for _, m := range g.matches {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	if len(g.matches) == 0 {
		fmt.Fprintf(&b, "no matches for %q in %s (%s files searched)\n", p.Pattern, rel, text.Thousands(g.searched))
	}
	if g.full {
		fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern, path or glob, or raise max_results (up to %d), to see more]\n", maxResults, GrepMaxResults)
	}
	if g.tooBig > 0 {
		fmt.Fprintf(&b, "[skipped %s files over 2 MB]\n", text.Thousands(g.tooBig))
	}
	if g.secret > 0 {
		fmt.Fprintf(&b, "[skipped %s files on the secret-file deny list]\n", text.Thousands(g.secret))
	}
	res.Content = strings.TrimSuffix(b.String(), "\n")
	return res
}

type grepper struct {
	re       *regexp.Regexp
	glob     string
	max      int
	w        *wsRoot
	secrets  []string // the deny list
	res      *Result  // counts the secrets redacted from cut lines
	matches  []string
	paths    []string
	searched int
	tooBig   int
	secret   int
	full     bool
}

// belowTop returns the walked path p relative to the walk's top directory,
// both slash-separated; "" for top itself.
func belowTop(top, p string) string {
	if top == "." {
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, top), "/")
}

// file searches one file met while walking a directory, unless the glob
// filters it out or it is on the deny list. name is its name in the root,
// rel its path as shown, realRel the path of its directory's real location
// joined with its name, and d its directory entry. The file searched must
// be the one checked: one swapped meanwhile is skipped.
func (g *grepper) file(name, rel, realRel string, d fs.DirEntry) {
	if g.glob != "" {
		target := path.Base(rel)
		if strings.Contains(g.glob, "/") {
			target = rel
		}
		if ok, _ := path.Match(g.glob, target); !ok {
			return
		}
	}
	if MatchSecretFile(g.secrets, rel) || MatchSecretFile(g.secrets, realRel) {
		g.secret++
		return
	}
	if d.Type()&fs.ModeSymlink != 0 {
		// Search what the link leads to, if it stays in the workspace.
		real, err := g.w.resolve(name)
		if err != nil {
			return // dangling, looping or leading outside the workspace
		}
		if MatchSecretFile(g.secrets, filepath.ToSlash(real)) {
			g.secret++
			return
		}
		name = real
	}
	info, err := g.w.root.Lstat(name)
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	g.search(name, rel, info)
}

// search searches the regular file name (shown as rel) through the root;
// want is what an earlier stat found there, and a file swapped in since is
// skipped.
func (g *grepper) search(name, rel string, want fs.FileInfo) {
	data, err := g.w.readRegular(name, want, GrepMaxFileSize)
	if errors.Is(err, errTooBig) {
		g.tooBig++
		return
	}
	if err != nil || looksBinary(data, true) {
		return
	}
	g.searched++
	found := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), GrepMaxFileSize+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if !g.re.Match(line) {
			continue
		}
		if len(g.matches) >= g.max {
			g.full = true
			break
		}
		full := string(line)
		if len(full) > GrepMaxLineLen {
			// Redact before cutting, so no part of a secret is left.
			full = g.res.redact(full[:min(len(full), GrepMaxLineLen+secretSlack)])
		}
		shown := cutHead(full, GrepMaxLineLen)
		if len(shown) < len(line) {
			shown += " [...]"
		}
		g.matches = append(g.matches, fmt.Sprintf("%s:%d: %s", rel, n, shown))
		found = true
	}
	if found {
		g.paths = append(g.paths, rel)
	}
}
