package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

//go:embed list_dir.md
var listDirDoc string

// ListDirParams are the arguments of list_dir.
type ListDirParams struct {
	// Path is the directory to list, relative to the workspace root; empty
	// means ".".
	Path string `json:"path,omitempty"`
	// Depth is how many levels to descend; zero means 1, at most 3.
	Depth int `json:"depth,omitempty"`
}

// Limits of list_dir.
const (
	ListDirMaxDepth   = 3
	ListDirMaxEntries = 500
)

var listDirSpec = Spec{
	Name:        "list_dir",
	Description: strings.TrimSpace(listDirDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "Directory relative to the workspace root. Default \".\"."},
			"depth": {"type": "integer", "minimum": 1, "maximum": 3, "description": "Levels to descend. Default 1."}
		},
		"additionalProperties": false
	}`),
}

type listDir struct{}

// ListDir returns the list_dir tool: it lists a workspace directory up to
// three levels deep, sorted, bounded to 500 entries, skipping .git. It does
// not need approval.
func ListDir() Tool { return listDir{} }

func (listDir) Spec() Spec          { return listDirSpec }
func (listDir) NeedsApproval() bool { return false }

func (listDir) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "list_dir"
	var p ListDirParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	if p.Path == "" {
		p.Path = "."
	}
	if p.Depth < 0 || p.Depth > ListDirMaxDepth {
		return errorf(name, "depth %d is out of range; pass a depth between 1 and %d", p.Depth, ListDirMaxDepth)
	}
	depth := p.Depth
	if depth == 0 {
		depth = 1
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
	if !fi.IsDir() {
		return errorf(name, "%q is a file, not a directory; use read_file to read it", rel)
	}

	var (
		lines   []string
		omitted int
	)
	add := func(line string) {
		if len(lines) < ListDirMaxEntries {
			lines = append(lines, line)
		} else {
			omitted++
		}
	}
	// Walk through the root, so nothing outside the workspace is listed
	// even if a directory is swapped for a symlink meanwhile.
	top := filepath.ToSlash(used)
	walkErr := fs.WalkDir(w.root.FS(), top, func(path string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if path == top {
			return err
		}
		below := belowTop(top, path)
		entryRel := joinRel(rel, below)
		level := strings.Count(below, "/") + 1
		if err != nil {
			add(entryRel + "/ (unreadable)")
			return nil
		}
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			add(entryRel + "/")
			if level >= depth {
				return fs.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := w.root.Readlink(filepath.FromSlash(path))
			add(fmt.Sprintf("%s -> %s", entryRel, target))
		default:
			info, ierr := d.Info()
			if ierr != nil {
				add(entryRel)
				return nil
			}
			if info.Mode().IsRegular() {
				add(fmt.Sprintf("%s (%s)", entryRel, text.Plural(int(info.Size()), "byte")))
			} else {
				add(fmt.Sprintf("%s (%s)", entryRel, info.Mode().Type()))
			}
		}
		return nil
	})
	if walkErr != nil {
		if ctx.Err() != nil {
			return errorf(name, "listing %q was cancelled; call again if still needed", rel)
		}
		return errorf(name, "listing %q failed (%v); check the path and permissions", rel, unwrapPathError(walkErr))
	}
	res := Result{Paths: []string{rel}}
	if len(lines) == 0 {
		res.Content = fmt.Sprintf("%s/ is empty", strings.TrimSuffix(rel, "/"))
		return res
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "[%s more entries not shown; list a subdirectory or use a smaller depth]\n", text.Thousands(omitted))
	}
	res.Content = strings.TrimSuffix(b.String(), "\n")
	return res
}
