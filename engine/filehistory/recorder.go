package filehistory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tally-dev/tally/storage"
)

// Recorder records the changes one session makes to its workspace. Call
// BeginTurn at the start of each user turn, BeforeWrite/AfterWrite around
// every file write of a tool, and BeforeShell/AfterShell around every shell
// command. Its methods are safe for concurrent use; everything is persisted
// before they return.
type Recorder struct {
	w       *Workspace
	session string
	view    *view // the view of the running command, nil outside one
	// rules are the session's ignore rules once read (see ignoreRules);
	// w.mu guards them.
	rules map[string]string
}

// Recorder returns the recorder of session, reopening the session's
// checkpoints if it has some. The session counts as open until Close.
func (w *Workspace) Recorder(session string) (*Recorder, error) {
	r := &Recorder{w: w, session: session}
	err := r.update(func(rec *sessionRec) error {
		rec.Closed = false
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.open[r] = true
	w.mu.Unlock()
	return r, nil
}

// Session returns the recorder's session ID.
func (r *Recorder) Session() string { return r.session }

// Workspace returns the workspace the recorder records.
func (r *Recorder) Workspace() *Workspace { return r.w }

// update runs fn on the session's record and stores it, with blobs, in one
// transaction, then keeps the store under its limit.
func (r *Recorder) update(fn func(rec *sessionRec) error, blobs []blob) error {
	w := r.w
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.updateLocked(r.session, fn, blobs)
}

// updateLocked is update for a caller that holds w.mu.
func (w *Workspace) updateLocked(session string, fn func(rec *sessionRec) error, blobs []blob) error {
	err := w.st.Update(func(tx *storage.Tx) error {
		rec, err := w.loadSession(tx, session)
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
		rec.Used = time.Now()
		if err := w.putBlobs(tx, blobs); err != nil {
			return err
		}
		return w.saveSession(tx, session, rec)
	})
	if err != nil {
		return fmt.Errorf("cannot record the changes of session %s: %w", session, err)
	}
	w.noteBlobs(blobs)
	return w.pruneLocked()
}

// current returns the record of the session's current turn, adding it if
// the session has none yet.
func (rec *sessionRec) current() *turnRec {
	if n := len(rec.Turns); n > 0 && rec.Turns[n-1].Turn == rec.Turn {
		return &rec.Turns[n-1]
	}
	rec.Turns = append(rec.Turns, turnRec{Turn: rec.Turn})
	return &rec.Turns[len(rec.Turns)-1]
}

// recordBefore records img as the before-image of rel in the current turn
// unless the turn already has one.
func (rec *sessionRec) recordBefore(rel string, img Image) {
	t := rec.current()
	if t.Before == nil {
		t.Before = map[string]Image{}
	}
	if _, ok := t.Before[rel]; !ok {
		t.Before[rel] = img
	}
}

// BeginTurn marks the start of user turn turn: the checkpoint of that turn
// is the state of the files the session touches from now on, as they are
// now. A turn number not above the current one means the conversation was
// rewound: the checkpoints of that turn and later ones are superseded and
// discarded. Calling it again for the current turn does nothing.
func (r *Recorder) BeginTurn(turn int) error {
	return r.update(func(rec *sessionRec) error {
		if turn == rec.Turn && len(rec.Turns) > 0 {
			return nil
		}
		rec.Turns = slices.DeleteFunc(rec.Turns, func(t turnRec) bool { return t.Turn >= turn })
		rec.Turn = turn
		rec.current()
		return nil
	}, nil)
}

// BeforeWrite stores the current state of the workspace file rel (its
// content, or that it does not exist) as its before-image in the current
// turn, unless the turn already has one. Call it before write_file or
// edit_file changes the file. A file that cannot be kept (too large, not a
// regular file, unreadable) is recorded as not restorable, which is not an
// error.
func (r *Recorder) BeforeWrite(rel string) error {
	return r.recordFile(rel, false)
}

// AfterWrite records the state of rel after the session wrote it, so that
// later changes made outside Tally are recognised as conflicts. Call it
// after write_file or edit_file changed the file.
func (r *Recorder) AfterWrite(rel string) error {
	return r.recordFile(rel, true)
}

func (r *Recorder) recordFile(rel string, after bool) error {
	key, err := cleanRel(rel)
	if err != nil {
		return err
	}
	root, err := r.w.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	if !after {
		rec, err := r.w.session(r.session)
		if err != nil {
			return err
		}
		if _, ok := rec.current().Before[key]; ok {
			return nil // already recorded this turn; do not read the file again
		}
		// The session's first change fixes its ignore rules, before a
		// write can change them.
		if _, err := r.ignoreRules(root); err != nil {
			return err
		}
	}
	img, data := readImage(root, key, r.w.limits)
	var blobs []blob
	if checked := r.w.refuse(key, img, data); checked.Kind != File {
		if !after {
			img = checked // a before-image that may not be stored
		}
	} else if _, ok := r.w.sizes[img.SHA]; !ok {
		blobs = []blob{{sha: img.SHA, data: compress(data)}}
	}
	return r.w.updateLocked(r.session, func(rec *sessionRec) error {
		if after {
			rec.Last[key] = img
		} else {
			rec.recordBefore(key, img)
		}
		return nil
	}, blobs)
}

// ShellChanges lists what a shell command changed in the workspace, as
// slash-separated workspace paths in sorted order. A rename shows as one
// deleted and one created path. NotRestorable lists the changed paths whose
// earlier state could not be kept, such as files above the size limit.
type ShellChanges struct {
	Created, Modified, Deleted []string
	NotRestorable              []string
}

// BeforeShell brings the manifest of the workspace up to date (honouring
// the .gitignore files the session started with, see ignoreRules, and
// skipping .git) and makes sure the content of every file in it is in the
// store, in the stage or, for a file git's index vouches for, in the
// repository's object store, so that whatever the command changes can be
// restored. Call it right before a shell command runs and AfterShell right
// after.
func (r *Recorder) BeforeShell() error {
	return r.snapshot(func(v *view) {
		if r.view != nil {
			delete(r.view.pending, r)
		}
		v.pending[r] = map[string]entry{} // from now on, what changes is the command's
		r.view = v
	}, nil)
}

// snapshot brings the session's view of the workspace up to date, with
// w.mu held, then runs then on it. stop, when not nil, can end the walk
// early: then nothing else is done and stop's error is returned.
func (r *Recorder) snapshot(then func(*view), stop func() error) error {
	root, err := r.w.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	w := r.w
	w.mu.Lock()
	defer w.mu.Unlock()
	var stopped func() bool
	if stop != nil {
		if err := stop(); err != nil {
			return err // cancelled while it waited for the workspace
		}
		stopped = func() bool { return stop() != nil }
	}
	rules, err := r.ignoreRules(root)
	if err != nil {
		return err
	}
	v := w.view(rules)
	w.refresh(root, v, stopped)
	if stop != nil {
		if err := stop(); err != nil {
			return err
		}
	}
	if then != nil {
		then(v)
	}
	w.tidyStage()
	return w.pruneLocked()
}

// Prepare takes the workspace's snapshot now, as BeforeShell would, without
// a command to follow: call it when a turn starts, off the turn's path, so
// that the first command of a process finds the workspace already listed
// and read and pays only for what changed since. It fixes the session's
// ignore rules, as its first change would. It holds the workspace while it
// works: a BeforeWrite meanwhile waits for it. Cancelling ctx ends it
// early, leaving things as they were (the next snapshot walks the whole
// workspace), and returns ctx's error.
func (r *Recorder) Prepare(ctx context.Context) error {
	return r.snapshot(nil, ctx.Err)
}

// AfterShell brings the manifest up to date again and records the earlier
// state of every path the command changed, created or deleted as its
// before-image in the current turn, and its new state as the session's last
// write. Files whose stat changed but whose content did not are not changes.
func (r *Recorder) AfterShell() (ShellChanges, error) {
	var out ShellChanges
	root, err := r.w.openRoot()
	if err != nil {
		return out, err
	}
	defer root.Close()
	w := r.w
	w.mu.Lock()
	defer w.mu.Unlock()
	v := r.view
	if v == nil || v.pending[r] == nil {
		return out, errors.New("AfterShell called without BeforeShell; call BeforeShell before running the command")
	}
	w.refresh(root, v, nil)
	before := v.pending[r]
	delete(v.pending, r)
	r.view = nil
	changes := w.changes(root, v, before)
	if len(changes) == 0 {
		w.tidyStage()
		return out, nil
	}
	// The earlier content of what changed becomes a stored before-image
	// now, unless Refuse declines it; unchanged files stay out of the store.
	var blobs []blob
	for i, c := range changes {
		if c.oldOK {
			img, b := c.old, (*blob)(nil)
			if c.oldData != nil {
				if img = w.refuse(c.rel, img, c.oldData); img.Kind == File {
					if _, ok := w.sizes[img.SHA]; !ok {
						b = &blob{sha: img.SHA, data: compress(c.oldData)}
					}
				}
			} else {
				img, b = w.persist(c.rel, c.old)
			}
			changes[i].old = img
			if b != nil {
				blobs = append(blobs, *b)
			}
		}
	}
	defer w.tidyStage()
	err = w.updateLocked(r.session, func(rec *sessionRec) error {
		for _, c := range changes {
			old, now := c.old, c.now
			switch {
			case !c.oldOK:
				old = Image{Kind: Absent}
				out.Created = append(out.Created, c.rel)
			case !c.nowOK:
				now = Image{Kind: Absent}
				out.Deleted = append(out.Deleted, c.rel)
			default:
				out.Modified = append(out.Modified, c.rel)
			}
			if old.Kind == Unrestorable {
				out.NotRestorable = append(out.NotRestorable, c.rel)
			}
			rec.recordBefore(c.rel, old)
			rec.Last[c.rel] = now
		}
		return nil
	}, blobs)
	if err == nil {
		for _, b := range blobs {
			if sum, ok := sumOf(b.sha); ok {
				w.stage.forget(sum)
			}
		}
	}
	return out, err
}

// Close marks the session closed: when the store is over its limit, the
// checkpoints of closed sessions are dropped before those of open ones. The
// recorder may be reopened with Workspace.Recorder.
func (r *Recorder) Close() error {
	w := r.w
	w.mu.Lock()
	if r.view != nil {
		delete(r.view.pending, r)
		r.view = nil
	}
	delete(w.open, r)
	if len(w.open) == 0 {
		// Nobody records here any more: stop watching. A later snapshot
		// walks the workspace again, comparing stats with the views.
		for _, v := range w.views {
			v.wt.close()
			v.wt = nil
		}
	}
	w.mu.Unlock()
	return r.update(func(rec *sessionRec) error {
		rec.Closed = true
		return nil
	}, nil)
}
