package filehistory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/diff"
)

// Action is what restoring a checkpoint does to one file.
type Action string

// The actions of a restore plan.
const (
	Unchanged     Action = "unchanged"      // the file is already as in the checkpoint
	Rewrite       Action = "restore"        // put back the checkpoint's content (or link)
	Remove        Action = "remove"         // the session created the file: delete it
	Recreate      Action = "recreate"       // the session deleted the file: bring it back
	NotRestorable Action = "not restorable" // the checkpoint's state was not kept; see Why
)

// FileRestore is the plan for one file the session touched. Target is its
// state in the checkpoint, Agent its state after the session last wrote it
// (Kind "" if the session never recorded a write) and Current its state on
// disk when the plan was made. Conflict means the file was changed outside
// Tally since the session last wrote it; Outside is then the diff from the
// session's last content to the current one. Diff goes from the current
// content to the checkpoint's: what restoring does.
type FileRestore struct {
	Path     string
	Action   Action
	Why      string
	Target   Image
	Agent    Image
	Current  Image
	Conflict bool
	Diff     diff.Diff
	Outside  diff.Diff
}

// Plan is what restoring the files of Session to the start of Turn would do,
// one entry per file the session touched since then, sorted by path.
type Plan struct {
	Session string
	Turn    int
	Files   []FileRestore
}

// Conflicts returns the paths of the plan's conflicting files.
func (p Plan) Conflicts() []string {
	var out []string
	for _, f := range p.Files {
		if f.Conflict && f.Action != Unchanged && f.Action != NotRestorable {
			out = append(out, f.Path)
		}
	}
	return out
}

// ErrConflict is wrapped by the error Restore returns when files were changed
// outside Tally and force is not set.
var ErrConflict = errors.New("files were changed outside Tally since the agent wrote them; review them and restore with force to overwrite")

// targets returns, for each path the session touched at or after turn, its
// state at the start of turn: the before-image of the earliest turn at or
// after it that touched the path.
func (rec *sessionRec) targets(turn int) map[string]Image {
	out := map[string]Image{}
	for _, t := range rec.Turns {
		if t.Turn < turn {
			continue
		}
		for p, img := range t.Before {
			if _, ok := out[p]; !ok {
				out[p] = img
			}
		}
	}
	return out
}

// Plan lists what restoring the files of session to the start of turn would
// do, without changing anything. Files the session never touched, or only
// touched before turn, are not in the plan.
func (w *Workspace) Plan(session string, turn int) (Plan, error) {
	rec, err := w.session(session)
	if err != nil {
		return Plan{}, err
	}
	return w.plan(session, rec, rec.targets(turn), turn)
}

func (w *Workspace) plan(session string, rec *sessionRec, targets map[string]Image, turn int) (Plan, error) {
	root, err := w.openRoot()
	if err != nil {
		return Plan{}, err
	}
	defer root.Close()
	w.mu.Lock()
	lim := w.limits
	w.mu.Unlock()
	p := Plan{Session: session, Turn: turn}
	for path, target := range targets {
		cur, data := readImage(root, path, lim)
		f := FileRestore{Path: path, Target: target, Agent: rec.Last[path], Current: cur}
		switch {
		case target.Kind == Unrestorable:
			f.Action, f.Why = NotRestorable, "its state at the checkpoint was not kept: "+target.Why
		case cur.Same(target):
			f.Action = Unchanged
		case cur.Kind == Unrestorable:
			f.Action, f.Why = NotRestorable, "what is there now cannot be replaced safely: "+cur.Why
		case target.Kind == Absent:
			f.Action = Remove
		case cur.Kind == Absent:
			f.Action = Recreate
		default:
			f.Action = Rewrite
		}
		if f.Agent.Kind != "" && !cur.Same(f.Agent) {
			f.Conflict = true
			if agent, err := w.imageBytes(f.Agent); err == nil {
				f.Outside = diff.Between(path, agent, displayBytes(cur, data), f.Agent.Kind != Absent, cur.Kind != Absent)
			}
		}
		if f.Action != NotRestorable && f.Action != Unchanged {
			tb, err := w.imageBytes(target)
			if err != nil {
				f.Action, f.Why = NotRestorable, err.Error()
			} else {
				f.Diff = diff.Between(path, displayBytes(cur, data), tb, cur.Kind != Absent, target.Kind != Absent)
			}
		}
		p.Files = append(p.Files, f)
	}
	slices.SortFunc(p.Files, func(a, b FileRestore) int { return strings.Compare(a.Path, b.Path) })
	return p, nil
}

// imageBytes returns the content an image stands for in a diff: the stored
// content of a file, a line naming a link's target, nothing otherwise.
func (w *Workspace) imageBytes(img Image) ([]byte, error) {
	switch img.Kind {
	case File:
		return w.content(img.SHA)
	case Link:
		return []byte("symlink to " + img.Target + "\n"), nil
	}
	return nil, nil
}

func displayBytes(img Image, data []byte) []byte {
	if img.Kind == Link {
		return []byte("symlink to " + img.Target + "\n")
	}
	return data
}

// Result reports what Restore did.
type Result struct {
	Restored []string // paths written, recreated or removed
	Skipped  []string // "path: reason" for files that could not be restored
}

// Restore carries out plan: it puts every file back to its state in the
// checkpoint through a handle confined to the workspace (symlinks are never
// followed out of it), writing each file atomically. It writes nothing and
// returns an error wrapping ErrConflict if a file was changed outside Tally
// and force is false, and an error if a file changed since the plan was
// made. Files marked not restorable are skipped and listed in the result.
// After a restore the session's last write of each file is its restored
// state, and the state it replaced is recorded as a before-image of the
// session's current turn, so a restore can itself be undone.
func (w *Workspace) Restore(plan Plan, force bool) (Result, error) {
	var res Result
	root, err := w.openRoot()
	if err != nil {
		return res, err
	}
	defer root.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	var todo []FileRestore
	for _, f := range plan.Files {
		switch f.Action {
		case Unchanged:
			continue
		case NotRestorable:
			res.Skipped = append(res.Skipped, f.Path+": "+f.Why)
			continue
		}
		if now, _ := readImage(root, f.Path, w.limits); !now.Same(f.Current) {
			return Result{}, fmt.Errorf("%s changed since the restore was planned; plan the restore again", f.Path)
		}
		todo = append(todo, f)
	}
	if c := plan.Conflicts(); len(c) > 0 && !force {
		return Result{}, fmt.Errorf("%w: %s", ErrConflict, strings.Join(c, ", "))
	}
	contents := map[string][]byte{}
	for _, f := range todo {
		if f.Target.Kind == File {
			data, err := w.content(f.Target.SHA)
			if err != nil {
				return Result{}, err
			}
			contents[f.Path] = data
		}
	}
	var done []FileRestore
	var werr error
	for _, f := range todo {
		if err := put(root, f.Path, f.Target, contents[f.Path]); err != nil {
			werr = fmt.Errorf("restoring %s failed (%w); the files listed as restored were put back, check permissions and restore again", f.Path, cause(err))
			break
		}
		done = append(done, f)
		res.Restored = append(res.Restored, f.Path)
	}
	err = w.updateLocked(plan.Session, func(rec *sessionRec) error {
		for _, f := range done {
			if len(rec.Turns) > 0 {
				rec.recordBefore(f.Path, f.Current)
			}
			rec.Last[f.Path] = f.Target
		}
		return nil
	}, nil)
	if werr != nil {
		return res, werr
	}
	return res, err
}

// put makes rel in root hold img: content written to a temporary file and
// renamed over rel, a symlink recreated, or the file removed.
func put(root *os.Root, rel string, img Image, data []byte) error {
	name := filepath.FromSlash(rel)
	switch img.Kind {
	case Absent:
		err := root.Remove(name)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	case Link:
		if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := root.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return root.Symlink(img.Target, name)
	case File:
		if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(name), ".tally-restore-"+img.SHA[:16])
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			_ = root.Remove(tmp)
			f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = root.Chmod(tmp, img.Mode.Perm())
		}
		if err == nil {
			err = root.Rename(tmp, name)
		}
		if err != nil {
			_ = root.Remove(tmp)
		}
		return err
	}
	return fmt.Errorf("state %q cannot be written", img.Kind)
}

// FileChange is one file a session changed: the diff from its state at the
// checkpoint to its current state.
type FileChange struct {
	Path       string
	Diff       diff.Diff
	Restorable bool
	Why        string // why it is not restorable
}

// Changes returns every file session changed, with its diff against the
// session's first checkpoint, sorted by path. Files back in their original
// state are left out.
func (w *Workspace) Changes(session string) ([]FileChange, error) {
	rec, err := w.session(session)
	if err != nil || len(rec.Turns) == 0 {
		return nil, err
	}
	return w.ChangesSince(session, rec.Turns[0].Turn)
}

// ChangesSince returns every file session changed since the start of turn,
// with its diff from that checkpoint to now, sorted by path.
func (w *Workspace) ChangesSince(session string, turn int) ([]FileChange, error) {
	p, err := w.Plan(session, turn)
	if err != nil {
		return nil, err
	}
	var out []FileChange
	for _, f := range p.Files {
		switch f.Action {
		case Unchanged:
			continue
		case NotRestorable:
			out = append(out, FileChange{Path: f.Path, Why: f.Why, Diff: diff.Diff{Path: f.Path, TooLarge: true}})
			continue
		}
		out = append(out, FileChange{Path: f.Path, Diff: reverse(f.Diff), Restorable: true})
	}
	return out, nil
}

// reverse turns a diff around, so that the checkpoint is the old side.
func reverse(d diff.Diff) diff.Diff {
	r := diff.Diff{Path: d.Path, New: d.Deleted, Deleted: d.New, Binary: d.Binary, TooLarge: d.TooLarge}
	for _, h := range d.Hunks {
		rh := diff.Hunk{OldStart: h.NewStart, OldLines: h.NewLines, NewStart: h.OldStart, NewLines: h.OldLines}
		var rem, add []diff.Line
		flush := func() {
			rh.Lines = append(append(rh.Lines, rem...), add...)
			rem, add = nil, nil
		}
		for _, l := range h.Lines {
			l.OldNo, l.NewNo = l.NewNo, l.OldNo
			switch l.Kind {
			case diff.Add:
				l.Kind = diff.Remove
				rem = append(rem, l)
			case diff.Remove:
				l.Kind = diff.Add
				add = append(add, l)
			default:
				flush()
				rh.Lines = append(rh.Lines, l)
			}
		}
		flush()
		r.Hunks = append(r.Hunks, rh)
	}
	return r
}

// RevertFile puts the file rel back to its state at the session's first
// checkpoint, refusing with an error wrapping ErrConflict if it was changed
// outside Tally and force is false.
func (w *Workspace) RevertFile(session, rel string, force bool) (Result, error) {
	key, err := cleanRel(rel)
	if err != nil {
		return Result{}, err
	}
	rec, err := w.session(session)
	if err != nil {
		return Result{}, err
	}
	if len(rec.Turns) == 0 {
		return Result{}, fmt.Errorf("session %s has no checkpoints; nothing to revert", session)
	}
	first := rec.Turns[0].Turn
	target, ok := rec.targets(first)[key]
	if !ok {
		return Result{}, fmt.Errorf("session %s never changed %s; pick a file from its changes", session, key)
	}
	p, err := w.plan(session, rec, map[string]Image{key: target}, first)
	if err != nil {
		return Result{}, err
	}
	return w.Restore(p, force)
}
