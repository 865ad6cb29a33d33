package workbench

import (
	"fmt"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewind"
)

// ErrConflict is matched (errors.Is) by the error of a rewind or revert
// refused because files were changed outside Tally since the agent wrote
// them; repeating it with force overwrites them.
var ErrConflict = filehistory.ErrConflict

// checkpoints opens, for reading, the file checkpoints of session id's
// workspace and additional folders.
func (w *Workbench) checkpoints(id string) (*rewind.Session, error) {
	meta, err := w.store.Session(id)
	if err != nil {
		return nil, fmt.Errorf("no session with ID %q (%w); run `tally sessions` to list them", id, err)
	}
	saved := w.Settings()
	return rewind.Open(rewind.Options{Store: w.store, ID: id, Workspace: meta.Workspace, Roots: agent.Roots(meta), Cycle: meta.Cycle,
		Limits: rewind.Limits(saved.CheckpointCap, saved.Shell.SecretFiles)}), nil
}

// Changes returns the files session id changed, with their diffs: against
// the session's first checkpoint when sinceTurn is 0, else since the start
// of that turn (rewind.Turn.N). It reads the store and the folders only,
// without opening the session, so it can be called while the app shows
// it; a session that is open is better asked directly (agent.Session.Changes).
func (w *Workbench) Changes(id string, sinceTurn int) ([]filehistory.FileChange, error) {
	r, err := w.checkpoints(id)
	if err != nil {
		return nil, err
	}
	if sinceTurn > 0 {
		return r.Since(sinceTurn)
	}
	return r.Changes()
}

// Unrestorable returns the turns of session id whose checkpoints lost
// content to the size cap (Settings.CheckpointCap): rewinding the files
// to them leaves some files as they are.
func (w *Workbench) Unrestorable(id string) ([]int, error) {
	r, err := w.checkpoints(id)
	if err != nil {
		return nil, err
	}
	return r.Unrestorable()
}
