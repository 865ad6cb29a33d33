package filehistory

import (
	"fmt"
	"os"
	"slices"
)

// CopyTo writes into the folder dst (another checkout of the same files,
// such as a git worktree) the state, at the start of turn, of every file
// session changed: for a file changed in turn or later, its before-image
// from the checkpoint; for a file the session changed only before turn,
// its content in the workspace now (what the session left, unless it was
// changed outside Tally since). A file absent then is removed from dst. It
// never reads or writes a file the session did not touch, never follows a
// link out of dst, and never copies what Limits.Refuse declines (a
// credential); files it cannot put back are listed in Result.Skipped with
// the reason, which is not an error. The workspace itself is not changed.
func (w *Workspace) CopyTo(session string, turn int, dst string) (Result, error) {
	var res Result
	rec, err := w.session(session)
	if err != nil {
		return res, err
	}
	targets := rec.targets(turn)
	var paths []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, t := range rec.Turns {
		for p := range t.Before {
			add(p)
		}
	}
	for p := range rec.Last {
		add(p)
	}
	slices.Sort(paths)
	src, err := w.openRoot()
	if err != nil {
		return res, err
	}
	defer src.Close()
	out, err := os.OpenRoot(dst)
	if err != nil {
		return res, fmt.Errorf("the folder %s cannot be opened (%w); check that it exists", dst, cause(err))
	}
	defer out.Close()
	w.mu.Lock()
	lim := w.limits
	w.mu.Unlock()
	for _, p := range paths {
		img, ok := targets[p]
		var data []byte
		if !ok {
			img, data = readImage(src, p, lim)
			img = w.refuse(p, img, data)
		} else if img.Kind == File {
			if data, err = w.content(img.SHA); err != nil {
				res.Skipped = append(res.Skipped, p+": "+err.Error())
				continue
			}
		}
		if img.Kind == Unrestorable {
			res.Skipped = append(res.Skipped, p+": "+img.Why)
			continue
		}
		if err := put(out, p, img, data); err != nil {
			return res, fmt.Errorf("writing %s into %s failed (%w); check the folder's permissions and try again", p, dst, cause(err))
		}
		res.Restored = append(res.Restored, p)
	}
	return res, nil
}
