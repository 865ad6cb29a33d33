package tool

import (
	"fmt"
	"path/filepath"
)

// Recorder is told about every change the file tools and run_shell make to
// the workspace, so that it can be reviewed and undone (the engine backs it
// with package filehistory). write_file and edit_file call BeforeWrite with
// the workspace-relative, slash-separated path of the file they are about
// to change and AfterWrite once it was written; run_shell calls BeforeShell
// right before the command starts and AfterShell after it ended, however
// it ended; AfterShell returns the workspace-relative paths of the files
// the command created or modified, which become the result's Paths (so
// they are checked like an edit's). A tool whose Before call fails does
// not run: its result says why. Implementations must be safe for
// concurrent use.
type Recorder interface {
	BeforeWrite(rel string) error
	AfterWrite(rel string) error
	BeforeShell() error
	AfterShell() (changed []string, err error)
}

// recordTarget returns the path a write of name (rel in slash form) really
// changes: the file its symlinks lead to, when that is inside the
// workspace, else rel itself.
func (w *wsRoot) recordTarget(rel, name string) string {
	if target, err := w.resolve(name); err == nil && target != "." {
		return w.show(filepath.ToSlash(target))
	}
	return rel
}

// beforeWrite tells env's recorder, if any, that rel is about to be
// written; a failure is the tool's refusal.
func (e *Env) beforeWrite(tool, rel string) (Result, bool) {
	if e == nil || e.Recorder == nil {
		return Result{}, true
	}
	if err := e.Recorder.BeforeWrite(rel); err != nil {
		return errorf(tool, "%q was not changed because its current content could not be saved for undo (%v); free space in Tally's data folder or check its settings, then call again", rel, err), false
	}
	return Result{}, true
}

// afterWrite tells env's recorder, if any, that rel was written. A failure
// does not undo the write; it is returned as a note for the result.
func (e *Env) afterWrite(rel string) string {
	if e == nil || e.Recorder == nil {
		return ""
	}
	if err := e.Recorder.AfterWrite(rel); err != nil {
		return fmt.Sprintf("\nnote: the new state of %s could not be recorded (%v), so later changes to it outside Tally will not be flagged on undo", rel, err)
	}
	return ""
}
