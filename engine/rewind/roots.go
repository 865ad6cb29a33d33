package rewind

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/storage"
)

// root is the checkpoints of one folder a session changes files in: its
// workspace, whose files are shown relative to it, or one of its
// additional folders, whose files are shown by their absolute paths (as
// the file tools show them). Each folder keeps its own checkpoints
// (filehistory.Workspace); the session's turns number them alike.
type root struct {
	dir   string
	shown string                 // "" for the workspace, else dir in slash form
	ws    *filehistory.Workspace // nil with err saying why
	err   error
}

// openRoots opens the checkpoints of the workspace and of each additional
// folder; one that cannot be opened is left unavailable, saying why.
func openRoots(st *storage.Store, workspace string, extra []string, lim filehistory.Limits) []root {
	rs := []root{{dir: workspace}}
	for _, d := range extra {
		rs = append(rs, root{dir: d, shown: filepath.ToSlash(d)})
	}
	for i := range rs {
		rs[i].ws, rs[i].err = filehistory.Open(st, rs[i].dir, lim)
	}
	return rs
}

// show returns the form the tools show rel, a path inside o, in; s may
// be followed by a reason ("path: why").
func (o root) show(s string) string {
	if o.shown == "" || s == "" {
		return s
	}
	return o.shown + "/" + s
}

// own reports whether p, a path as the tools show it, is a file of o,
// and its path inside o.
func (o root) own(p string) (string, bool) {
	if o.shown == "" {
		return p, !path.IsAbs(p)
	}
	rel, ok := strings.CutPrefix(p, o.shown+"/")
	return rel, ok
}

// available returns o's checkpoints, or an error saying why they cannot
// be read.
func (o root) available() (*filehistory.Workspace, error) {
	if o.ws == nil {
		return nil, fmt.Errorf("the file checkpoints of %s cannot be read (%w); check that the folder exists", o.dir, o.err)
	}
	return o.ws, nil
}

// shownPlan returns p with every path in the form the tools show it.
func (o root) shownPlan(p filehistory.Plan) filehistory.Plan {
	if o.shown == "" {
		return p
	}
	p.Files = slices.Clone(p.Files)
	for i := range p.Files {
		f := &p.Files[i]
		f.Path, f.Diff.Path, f.Outside.Path = o.show(f.Path), o.show(f.Diff.Path), o.show(f.Outside.Path)
	}
	return p
}

// ownPlan returns the part of p, a plan of every folder, that restores
// o's files, with their paths inside o.
func (o root) ownPlan(p filehistory.Plan) filehistory.Plan {
	out := filehistory.Plan{Session: p.Session, Turn: p.Turn}
	for _, f := range p.Files {
		if rel, ok := o.own(f.Path); ok {
			f.Path = rel
			out.Files = append(out.Files, f)
		}
	}
	return out
}

// shownResult returns res with every path in the form the tools show it.
func (o root) shownResult(res filehistory.Result) filehistory.Result {
	if o.shown == "" {
		return res
	}
	var out filehistory.Result
	for _, p := range res.Restored {
		out.Restored = append(out.Restored, o.show(p))
	}
	for _, s := range res.Skipped {
		out.Skipped = append(out.Skipped, o.show(s))
	}
	return out
}

// merge adds b's files to a's.
func merge(a, b filehistory.Result) filehistory.Result {
	a.Restored = append(a.Restored, b.Restored...)
	a.Skipped = append(a.Skipped, b.Skipped...)
	return a
}
