package workbench

import (
	"fmt"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewind"
)

// ErrConflict is matched (errors.Is) by the error of a rewind or revert
// refused because files were changed outside Tally since the agent wrote
// them; repeating it with force overwrites them.
var ErrConflict = filehistory.ErrConflict

// checkpoints opens the file checkpoints of session id's workspace.
func (w *Workbench) checkpoints(id string) (*filehistory.Workspace, error) {
	meta, err := w.store.Session(id)
	if err != nil {
		return nil, fmt.Errorf("no session with ID %q (%w); run `tally sessions` to list them", id, err)
	}
	saved := w.Settings()
	return filehistory.Open(w.store, meta.Workspace, rewind.Limits(saved.CheckpointCap, saved.Shell.SecretFiles))
}

// Changes returns the files session id changed, with their diffs: against
// the session's first checkpoint when sinceTurn is 0, else since the start
// of that turn (rewind.Turn.N). It reads the store and the workspace only,
// without opening the session, so it can be called while the app shows
// it; a session that is open is better asked directly (agent.Session.Changes).
func (w *Workbench) Changes(id string, sinceTurn int) ([]filehistory.FileChange, error) {
	ws, err := w.checkpoints(id)
	if err != nil {
		return nil, err
	}
	if sinceTurn > 0 {
		return ws.ChangesSince(id, sinceTurn)
	}
	return ws.Changes(id)
}

// Unrestorable returns the turns of session id whose checkpoints lost
// content to the size cap (Settings.CheckpointCap): rewinding the files
// to them leaves some files as they are.
func (w *Workbench) Unrestorable(id string) ([]int, error) {
	ws, err := w.checkpoints(id)
	if err != nil {
		return nil, err
	}
	return ws.Unrestorable(id)
}
