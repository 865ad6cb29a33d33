package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Plan returns the dry run of a rewind to the start of turn (see
// rewind.Turn.N). It waits for a running turn.
func (h Rewind) Plan(turn int) (rewind.Plan, error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns.Plan(turn, s.meta.Cycle, s.log.Entries())
}

// Apply puts the session back to the start of turn: with files, every
// file the session changed from then on gets its content of that moment
// back (see rewind.Session.RestoreFiles); with chat, the turn's message
// and everything after it are superseded in one recorded rebuild — kept in
// the store and the export — and the checklist and working set return to
// what they were before the message. A file changed outside Tally since
// the agent last wrote it makes the rewind fail, with nothing changed and
// an error wrapping filehistory.ErrConflict, unless force is set. It fails
// with ErrBusy while a turn runs.
//
// The conversation can be rewound only to a turn of the current cycle
// still in the log (see rewind.Plan.ChatErr); the files to any turn.
func (h Rewind) Apply(ctx context.Context, turn int, files, chat, force bool) (rewind.Result, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return rewind.Result{}, ErrBusy
	}
	defer end()
	if !files && !chat {
		return rewind.Result{}, errors.New("a rewind must restore the files, the conversation or both; choose at least one")
	}
	if err := ctx.Err(); err != nil {
		return rewind.Result{}, err
	}
	t, err := s.turns.Find(turn, s.log.Entries())
	if err != nil {
		return rewind.Result{}, err
	}
	if chat && t.LogIndex < 0 {
		return rewind.Result{}, fmt.Errorf("cannot rewind the conversation: %s", rewind.WhyNotInLog(t, s.meta.Cycle))
	}
	var res rewind.Result
	if files {
		if res.Files, err = s.turns.RestoreFiles(turn, force); err != nil {
			return res, err
		}
	}
	if chat {
		if err := h.chat(t, &res, files); err != nil {
			if files && len(res.Files.Restored) > 0 {
				err = fmt.Errorf("%w (the files were restored already)", err)
			}
			return res, err
		}
	}
	return res, nil
}

// chat supersedes t's message and everything after it, restores
// the checklist and working set of that moment and marks the turns from
// t on as superseded, all in one rebuild.
func (h Rewind) chat(t rewind.Turn, res *rewind.Result, files bool) error {
	s := h.s
	msgs := s.log.Messages()
	kept := append([]transcript.Message(nil), msgs[:t.LogIndex]...)
	// The message before a user message ends a turn, so every call has
	// its result; a damaged log is paired here all the same, so the next
	// request is valid for a strict server.
	for _, c := range transcript.Unanswered(kept) {
		m := transcript.ToolResult(c, "interrupted: the conversation was rewound before this call's result was recorded", true, s.cfg.now())
		m.Kind = transcript.KindRepair
		kept = append(kept, m)
	}
	text := msgs[t.LogIndex].Body()

	snap, haveSnap := s.turns.SnapshotOf(t.N)
	prevList, _ := s.checklist.MarshalJSON()
	prevWS := s.st.WorkingSet
	if haveSnap {
		if len(snap.Checklist) > 0 {
			if err := s.checklist.UnmarshalJSON(snap.Checklist); err != nil {
				haveSnap = false
			}
		}
		s.st.WorkingSet = status.WorkingSet{Paths: append([]string(nil), snap.WorkingSet...)}
	}
	if !haveSnap {
		res.Note = fmt.Sprintf("the checklist of turn %d was not recorded, so it was kept as it is", t.N)
		s.st.WorkingSet = workingSetOf(kept, s.st.WorkingSet)
	}
	list, _ := s.checklist.MarshalJSON()
	storeTurns, undo := s.turns.Supersede(t.N) // published with the rebuild
	_, err := s.rebuild(rewrite.Request{Kind: rewrite.Rewind, Reason: fmt.Sprintf("rewind to turn %d", t.N), Messages: kept,
		Describe: func(i *rewrite.Info) { i.Files = res.FilesShown(files) },
		Extra: func(tx *storage.Tx) error {
			if err := storeTurns(tx); err != nil {
				return err
			}
			return tx.PutState(s.meta.ID, checklistKey, list)
		}})
	if err != nil {
		_ = s.checklist.UnmarshalJSON(prevList)
		s.st.WorkingSet = prevWS
		undo()
		return err
	}
	s.savedList = s.checklist.Version()
	s.emit(Event{Kind: EventChecklist, Checklist: s.checklist.Items()})
	res.Superseded = len(msgs) - t.LogIndex
	res.Text = text
	return nil
}

// Changes returns every file the session changed, with its diff against
// the session's first checkpoint (see rewind.Session.Changes). It does
// not wait for a running turn.
func (h Files) Changes() ([]filehistory.FileChange, error) { return h.s.turns.Changes() }

// Since returns every file the session changed since the start of turn
// (see rewind.Turn.N), with its diff from then to now.
func (h Files) Since(turn int) ([]filehistory.FileChange, error) { return h.s.turns.Since(turn) }

// Revert puts the workspace file rel back to its state at the session's
// first checkpoint (see rewind.Session.Revert). It fails with ErrBusy
// while a turn runs.
func (h Files) Revert(rel string, force bool) (filehistory.Result, error) {
	end, ok := h.s.beginWork()
	if !ok {
		return filehistory.Result{}, ErrBusy
	}
	defer end()
	return h.s.turns.Revert(rel, force)
}

// RevertAll puts every file the session changed back to its state at the
// session's first checkpoint; with a conflict and no force nothing is
// written. The conversation is left as it is. It fails with ErrBusy
// while a turn runs.
func (h Files) RevertAll(force bool) (filehistory.Result, error) {
	end, ok := h.s.beginWork()
	if !ok {
		return filehistory.Result{}, ErrBusy
	}
	defer end()
	return h.s.turns.RevertAll(force)
}

// Unrestorable returns the session's turns whose checkpoints lost content
// to the store's size limit (see filehistory.Workspace.Unrestorable).
func (h Files) Unrestorable() ([]int, error) { return h.s.turns.Unrestorable() }
