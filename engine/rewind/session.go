package rewind

import (
	"errors"
	"fmt"
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
	Cycle     int    // its current cycle
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
	store   *storage.Store
	id      string
	folder  string                 // the workspace
	ws      *filehistory.Workspace // nil with wsErr saying why
	wsErr   error
	rec     *recorder // nil until Record
	turns   []Turn
	prepare bool
}

// Open reads the session's turns and opens the checkpoints of its
// workspace, for reading; a workspace that cannot be opened leaves them
// unavailable, which the methods that need them report.
func Open(opt Options) *Session {
	r := &Session{store: opt.Store, id: opt.ID, folder: opt.Workspace, prepare: opt.Prepare}
	r.turns = loadTurns(opt.Store, opt.ID, opt.Cycle, opt.Entries)
	r.ws, r.wsErr = filehistory.Open(opt.Store, opt.Workspace, opt.Limits)
	return r
}

// Record opens the session's recorder and returns it for the tools.
// Without checkpoints every tool that changes files refuses, saying why:
// a change that could not be undone is never made silently.
func (r *Session) Record() tool.Recorder {
	f := &recorder{}
	r.rec = f
	if r.ws == nil {
		f.fail(fmt.Errorf("file checkpoints are unavailable (%w)", r.wsErr))
		return f
	}
	rec, err := r.ws.Recorder(r.id)
	if err != nil {
		f.fail(err)
		return f
	}
	f.rec = rec
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
	err := f.rec.BeginTurn(n)
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
	err := f.rec.Close()
	f.fail(errors.New("the session was closed; open it again to change files"))
	return err
}

// checkpoints returns the workspace's checkpoints, or an error saying
// why they cannot be read.
func (r *Session) checkpoints() (*filehistory.Workspace, error) {
	if r.ws == nil {
		return nil, fmt.Errorf("the file checkpoints of %s cannot be read (%w); check that the workspace folder exists", r.folder, r.wsErr)
	}
	return r.ws, nil
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
	ws, err := r.checkpoints()
	if err != nil {
		p.FilesErr = err.Error()
		return p, nil
	}
	if p.Files, err = ws.Plan(r.id, n); err != nil {
		p.FilesErr = err.Error()
	}
	if p.Unrestorable, err = ws.Unrestorable(r.id); err != nil {
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
	ws, err := r.checkpoints()
	if err != nil {
		return filehistory.Result{}, err
	}
	return restore(ws, r.id, n, force, "rewound", "rewind")
}

// restore gives the files session id changed from turn n on their content
// of that moment back, refusing (nothing written) when one changed
// outside Tally and force is not set; done and verb word the refusal.
func restore(ws *filehistory.Workspace, id string, n int, force bool, done, verb string) (filehistory.Result, error) {
	plan, err := ws.Plan(id, n)
	if err != nil {
		return filehistory.Result{}, err
	}
	if c := plan.Conflicts(); len(c) > 0 && !force {
		return filehistory.Result{}, fmt.Errorf("%s changed outside Tally since the agent wrote them, so nothing was %s; review them and %s with force to overwrite them: %w",
			strings.Join(c, ", "), done, verb, filehistory.ErrConflict)
	}
	return ws.Restore(plan, force)
}

// Changes returns every file the session changed, with its diff against
// the session's first checkpoint, sorted by path; files back in their
// original state are left out. It never waits for a running turn.
func (r *Session) Changes() ([]filehistory.FileChange, error) {
	ws, err := r.checkpoints()
	if err != nil {
		return nil, err
	}
	return ws.Changes(r.id)
}

// Since returns every file the session changed since the start of turn
// n, with its diff from then to now. It never waits for a running turn.
func (r *Session) Since(n int) ([]filehistory.FileChange, error) {
	ws, err := r.checkpoints()
	if err != nil {
		return nil, err
	}
	return ws.ChangesSince(r.id, n)
}

// Revert puts the workspace file rel (slash-separated, relative to the
// workspace) back to its state at the session's first checkpoint. A file
// changed outside Tally since the agent wrote it is refused with an error
// wrapping filehistory.ErrConflict unless force is set.
func (r *Session) Revert(rel string, force bool) (filehistory.Result, error) {
	ws, err := r.checkpoints()
	if err != nil {
		return filehistory.Result{}, err
	}
	return ws.RevertFile(r.id, rel, force)
}

// RevertAll puts every file the session changed back to its state at the
// session's first checkpoint, as Revert does for one; with a conflict
// and no force nothing is written.
func (r *Session) RevertAll(force bool) (filehistory.Result, error) {
	ws, err := r.checkpoints()
	if err != nil {
		return filehistory.Result{}, err
	}
	turns, err := ws.Turns(r.id)
	if err != nil || len(turns) == 0 {
		return filehistory.Result{}, err
	}
	return restore(ws, r.id, turns[0], force, "reverted", "revert")
}

// Unrestorable returns the session's turns whose checkpoints lost content
// to the store's size limit (see filehistory.Workspace.Unrestorable). It
// never waits for a running turn.
func (r *Session) Unrestorable() ([]int, error) {
	ws, err := r.checkpoints()
	if err != nil {
		return nil, err
	}
	return ws.Unrestorable(r.id)
}
