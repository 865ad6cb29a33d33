package tool

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
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
			"glob": {"type": "string", "description": "Optional file name filter, such as \"*.go\"."},
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
	abs, rel, ws, err := confineArg(env, p.Path)
	if err != nil {
		return errResult(name, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return errorf(name, "%s", describeStatError(rel, err))
	}

	g := grepper{re: re, glob: p.Glob, max: maxResults}
	if fi.IsDir() {
		root := walkRoot(abs)
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if err != nil {
				return nil // unreadable entries are skipped
			}
			if g.full {
				return filepath.SkipAll
			}
			if d.IsDir() {
				if d.Name() == ".git" && p != root {
					return filepath.SkipDir
				}
				return nil
			}
			fileRel := joinRel(rel, relPath(root, p))
			if d.Type()&fs.ModeSymlink != 0 {
				// Follow symlinked files only when they stay inside the
				// workspace; symlinked directories are not descended.
				if _, cerr := Confine(ws, fileRel); cerr != nil {
					return nil
				}
			}
			g.file(p, fileRel, true)
			return nil
		})
		if err != nil && ctx.Err() != nil {
			return errorf(name, "the search was cancelled; call again with a narrower path if still needed")
		}
	} else {
		g.file(abs, rel, false)
	}

	res := Result{Paths: g.paths}
	var b strings.Builder
	for _, m := range g.matches {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	if len(g.matches) == 0 {
		fmt.Fprintf(&b, "no matches for %q in %s (%s files searched)\n", p.Pattern, rel, commas(g.searched))
	}
	if g.full {
		fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern, path or glob, or raise max_results (up to %d), to see more]\n", maxResults, GrepMaxResults)
	}
	if g.tooBig > 0 {
		fmt.Fprintf(&b, "[skipped %s files over 2 MB]\n", commas(g.tooBig))
	}
	res.Content = strings.TrimSuffix(b.String(), "\n")
	return res
}

type grepper struct {
	re       *regexp.Regexp
	glob     string
	max      int
	matches  []string
	paths    []string
	searched int
	tooBig   int
	full     bool
}

// file searches one file; filtered says whether the glob applies (it does
// not to a file named explicitly by path).
func (g *grepper) file(abs, rel string, filtered bool) {
	if filtered && g.glob != "" {
		target := path.Base(rel)
		if strings.Contains(g.glob, "/") {
			target = rel
		}
		if ok, _ := path.Match(g.glob, target); !ok {
			return
		}
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if fi.Size() > GrepMaxFileSize {
		g.tooBig++
		return
	}
	data, err := os.ReadFile(abs)
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
		text := cutHead(string(line), GrepMaxLineLen)
		if len(text) < len(line) {
			text += " [...]"
		}
		g.matches = append(g.matches, fmt.Sprintf("%s:%d: %s", rel, n, text))
		found = true
	}
	if found {
		g.paths = append(g.paths, rel)
	}
}
