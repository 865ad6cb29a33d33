package rewind

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Options say whose turns and checkpoints a Session keeps.
type Options struct {
	Store     *storage.Store
	ID        string // the session
	Workspace string // its workspace folder
	// Roots are its additional folders (absolute), whose changes are
	// checkpointed and restored beside the workspace's.
	Roots []string
	Cycle int // its current cycle
	// Entries is the current cycle's log, numbered as the turns of a
	// session from before turns were recorded.
	Entries []transcript.Entry
	Limits  filehistory.Limits // see Limits
	// Prepare takes the workspace's snapshot in the background when the
	// first turn starts (see filehistory.Recorder.Prepare).
	Prepare bool
}

// Session is one conversation's turns and file checkpoints.
type Session struct {
	store *storage.Store
	id    string
	// roots are the checkpoints of the workspace (first) and of the
	// additional folders.
	roots   []root
	rec     *recorder // nil until Record
	turns   []Turn
	prepare bool
}

// Open reads the session's turns and opens the checkpoints of its
// workspace, for reading; a workspace that cannot be opened leaves them
// unavailable, which the methods that need them report.
func Open(opt Options) *Session {
	r := &Session{store: opt.Store, id: opt.ID, prepare: opt.Prepare}
	r.turns = loadTurns(opt.Store, opt.ID, opt.Cycle, opt.Entries)
	r.roots = openRoots(opt.Store, opt.Workspace, opt.Roots, opt.Limits)
	return r
}

// Record opens the session's recorder and returns it for the tools.
// Without checkpoints every tool that changes files refuses, saying why:
// a change that could not be undone is never made silently.
func (r *Session) Record() tool.Recorder {
	f := &recorder{}
	r.rec = f
	main := r.roots[0]
	if main.ws == nil {
		f.fail(fmt.Errorf("file checkpoints are unavailable (%w)", main.err))
		return f
	}
	rec, err := main.ws.Recorder(r.id)
	if err != nil {
		f.fail(err)
		return f
	}
	f.rec = rec
	for _, o := range r.roots[1:] {
		x := extraRec{root: o}
		if o.ws == nil {
			x.err = fmt.Errorf("the file checkpoints of %s are unavailable (%w)", o.dir, o.err)
		} else if x.rec, x.err = o.ws.Recorder(r.id); x.err != nil {
			x.err = fmt.Errorf("the file checkpoints of %s are unavailable (%w)", o.dir, x.err)
		}
		f.extra = append(f.extra, x)
	}
	return f
}

// BeginTurn starts the checkpoint of user turn n. When it cannot be
// started, the tools refuse to change files for the turn rather than
// record the changes against the wrong turn.
func (r *Session) BeginTurn(n int) {
	f := r.rec
	if f == nil || f.rec == nil {
		return
	}
	err := f.each(func(rec *filehistory.Recorder) error { return rec.BeginTurn(n) })
	if err != nil {
		err = fmt.Errorf("the checkpoint of turn %d could not be started (%w)", n, err)
	}
	f.fail(err)
	if r.prepare {
		f.prepare()
	}
}

// Close ends the recording of file changes: a closed session's
// checkpoints are the first dropped when the store passes its size limit.
// The checkpoints stay readable; a later Record records again.
func (r *Session) Close() error {
	f := r.rec
	if f == nil || f.rec == nil {
		return nil
	}
	f.stopPreparing() // a snapshot under way ends before its recorder closes
	var err error
	f.each(func(rec *filehistory.Recorder) error {
		err = errors.Join(err, rec.Close())
		return nil
	})
	f.fail(errors.New("the session was closed; open it again to change files"))
	return err
}

// Plan is the dry run of a rewind to the start of a turn: what restoring
// the files and rewinding the conversation would each do. Nothing changes
// until the rewind.
type Plan struct {
	Turn Turn
	// Files is what restoring the files would do, one entry per file the
	// session changed from the turn on, with diffs and conflicts (files
	// changed outside Tally since the agent wrote them). FilesErr says
	// why the files cannot be restored at all ("" when they can).
	Files    filehistory.Plan
	FilesErr string
	// Superseded are the messages a rewind of the conversation takes out
	// of the log: the turn's message and everything after it. They stay
	// in the store and in the export, like those of every rebuild. ChatErr
	// says why the conversation cannot be rewound to this turn ("" when it
	// can).
	Superseded []transcript.Message
	ChatErr    string
	// Unrestorable lists the session's turns whose checkpoints lost
	// content to the store's size limit: rewinding the files to one of
	// them leaves some files as they are.
	Unrestorable []int
}

// Conflicts returns the paths of the files changed outside Tally since
// the agent last wrote them: restoring them needs force.
func (p Plan) Conflicts() []string { return p.Files.Conflicts() }

// Result is what a rewind did.
type Result struct {
	// Files lists the files restored and those skipped, with why.
	Files filehistory.Result
	// Superseded counts the messages taken out of the conversation.
	Superseded int
	// Text is the rewound message as the user typed it, for them to edit
	// and send again ("" when the conversation was not rewound).
	Text string
	// Note says what could not be put back ("" when everything was), such
	// as a checklist not recorded by an older Tally.
	Note string
}

// FilesShown is what a rewind did to the files, as the chat's row tells
// it: the number of files restored, or -1 when the rewind left the files
// as they were (files false).
func (r Result) FilesShown(files bool) *int {
	n := -1
	if files {
		n = len(r.Files.Restored)
	}
	return &n
}

// Plan returns the dry run of a rewind to the start of turn n in cycle,
// against the log entries.
func (r *Session) Plan(n, cycle int, entries []transcript.Entry) (Plan, error) {
	t, err := r.Find(n, entries)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Turn: t}
	if t.LogIndex < 0 {
		p.ChatErr = WhyNotInLog(t, cycle)
	} else {
		for i := t.LogIndex; i < len(entries); i++ {
			p.Superseded = append(p.Superseded, entries[i].Msg)
		}
	}
	if p.Files, err = r.plan(n); err != nil {
		p.FilesErr = err.Error()
	}
	if p.Unrestorable, err = r.Unrestorable(); err != nil {
		p.FilesErr = err.Error()
	}
	return p, nil
}

// WhyNotInLog says why the conversation, now in cycle, cannot be rewound
// to t.
func WhyNotInLog(t Turn, cycle int) string {
	switch {
	case t.Superseded:
		return fmt.Sprintf("turn %d was already taken out of the conversation by an earlier rewind", t.N)
	case t.Cycle < cycle:
		return fmt.Sprintf("turn %d belongs to cycle %d, and only turns of the current cycle %d can be rewound in the conversation; restore the files only", t.N, t.Cycle, cycle)
	}
	return fmt.Sprintf("turn %d is no longer in the conversation (a compaction removed it); restore the files only", t.N)
}

// RestoreFiles gives every file the session changed from the start of
// turn n on its content of that moment back (created files are removed,
// deleted ones come back; files the agent never touched are never
// written). A file changed outside Tally since the agent last wrote it
// makes it fail, with nothing changed and an error wrapping
// filehistory.ErrConflict, unless force is set.
func (r *Session) RestoreFiles(n int, force bool) (filehistory.Result, error) {
	plan, err := r.plan(n)
	if err != nil {
		return filehistory.Result{}, err
	}
	return r.restore(plan, force, "rewound", "rewind")
}

// plan is what restoring the files of every folder to the start of turn
// n would do, the workspace's files first, each folder's sorted by path.
func (r *Session) plan(n int) (filehistory.Plan, error) {
	all := filehistory.Plan{Session: r.id, Turn: n}
	for _, o := range r.roots {
		ws, err := o.available()
		if err != nil {
			return filehistory.Plan{}, err
		}
		p, err := ws.Plan(r.id, n)
		if err != nil {
			return filehistory.Plan{}, err
		}
		all.Files = append(all.Files, o.shownPlan(p).Files...)
	}
	return all, nil
}

// restore carries out plan, a plan of every folder, refusing (nothing
// written) when a file changed outside Tally and force is not set; done
// and verb word the refusal.
func (r *Session) restore(plan filehistory.Plan, force bool, done, verb string) (filehistory.Result, error) {
	if c := plan.Conflicts(); len(c) > 0 && !force {
		return filehistory.Result{}, fmt.Errorf("%s changed outside Tally since the agent wrote them, so nothing was %s; review them and %s with force to overwrite them: %w",
			strings.Join(c, ", "), done, verb, filehistory.ErrConflict)
	}
	var all filehistory.Result
	for _, o := range r.roots {
		own := o.ownPlan(plan)
		if len(own.Files) == 0 {
			continue
		}
		ws, err := o.available()
		if err != nil {
			return all, err
		}
		res, err := ws.Restore(own, force)
		all = merge(all, o.shownResult(res))
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// Changes returns every file the session changed, with its diff against
// the session's first checkpoint, the workspace's files first, each
// folder's sorted by path; files back in their original state are left
// out. It never waits for a running turn.
func (r *Session) Changes() ([]filehistory.FileChange, error) {
	return r.changes(func(ws *filehistory.Workspace) ([]filehistory.FileChange, error) { return ws.Changes(r.id) })
}

// Since returns every file the session changed since the start of turn
// n, with its diff from then to now. It never waits for a running turn.
func (r *Session) Since(n int) ([]filehistory.FileChange, error) {
	return r.changes(func(ws *filehistory.Workspace) ([]filehistory.FileChange, error) { return ws.ChangesSince(r.id, n) })
}

// changes gathers of from every folder, with the paths as the tools show
// them.
func (r *Session) changes(of func(*filehistory.Workspace) ([]filehistory.FileChange, error)) ([]filehistory.FileChange, error) {
	var out []filehistory.FileChange
	for _, o := range r.roots {
		ws, err := o.available()
		if err != nil {
			return nil, err
		}
		cs, err := of(ws)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			c.Path, c.Diff.Path = o.show(c.Path), o.show(c.Diff.Path)
			out = append(out, c)
		}
	}
	return out, nil
}

// Revert puts the file rel (as the tools show it: relative to the
// workspace, or absolute in an additional folder) back to its state at
// the session's first checkpoint. A file changed outside Tally since the
// agent wrote it is refused with an error wrapping
// filehistory.ErrConflict unless force is set.
func (r *Session) Revert(rel string, force bool) (filehistory.Result, error) {
	for _, o := range r.roots[1:] {
		if in, ok := o.own(rel); ok {
			ws, err := o.available()
			if err != nil {
				return filehistory.Result{}, err
			}
			res, err := ws.RevertFile(r.id, in, force)
			return o.shownResult(res), err
		}
	}
	ws, err := r.roots[0].available()
	if err != nil {
		return filehistory.Result{}, err
	}
	return ws.RevertFile(r.id, rel, force)
}

// RevertAll puts every file the session changed back to its state at the
// session's first checkpoint, as Revert does for one; with a conflict
// and no force nothing is written.
func (r *Session) RevertAll(force bool) (filehistory.Result, error) {
	all := filehistory.Plan{Session: r.id}
	for _, o := range r.roots {
		ws, err := o.available()
		if err != nil {
			return filehistory.Result{}, err
		}
		turns, err := ws.Turns(r.id)
		if err != nil {
			return filehistory.Result{}, err
		}
		if len(turns) == 0 {
			continue
		}
		p, err := ws.Plan(r.id, turns[0])
		if err != nil {
			return filehistory.Result{}, err
		}
		all.Files = append(all.Files, o.shownPlan(p).Files...)
	}
	return r.restore(all, force, "reverted", "revert")
}

// Unrestorable returns the session's turns whose checkpoints lost content
// to the store's size limit in any of its folders (see
// filehistory.Workspace.Unrestorable). It never waits for a running
// turn.
func (r *Session) Unrestorable() ([]int, error) {
	var out []int
	for _, o := range r.roots {
		ws, err := o.available()
		if err != nil {
			return nil, err
		}
		turns, err := ws.Unrestorable(r.id)
		if err != nil {
			return nil, err
		}
		out = append(out, turns...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
