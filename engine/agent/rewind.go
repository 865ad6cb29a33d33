package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// RewindPlan is the dry run of a rewind to the start of a turn: what
// restoring the files and rewinding the conversation would each do.
// Nothing changes until Rewind.
type RewindPlan struct {
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
func (p RewindPlan) Conflicts() []string { return p.Files.Conflicts() }

// RewindResult is what Rewind did.
type RewindResult struct {
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

// RewindPlan returns the dry run of a rewind to the start of turn (see
// Turn.N). It waits for a running turn.
func (s *Session) RewindPlan(turn int) (RewindPlan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.turnFor(turn)
	if err != nil {
		return RewindPlan{}, err
	}
	p := RewindPlan{Turn: t}
	if t.LogIndex < 0 {
		p.ChatErr = s.whyNotInLog(t)
	} else {
		p.Superseded = s.log.Messages()[t.LogIndex:]
	}
	ws, err := s.checkpoints()
	if err != nil {
		p.FilesErr = err.Error()
		return p, nil
	}
	if p.Files, err = ws.Plan(s.meta.ID, turn); err != nil {
		p.FilesErr = err.Error()
	}
	if p.Unrestorable, err = ws.Unrestorable(s.meta.ID); err != nil {
		p.FilesErr = err.Error()
	}
	return p, nil
}

// whyNotInLog says why the conversation cannot be rewound to t.
func (s *Session) whyNotInLog(t Turn) string {
	switch {
	case t.Superseded:
		return fmt.Sprintf("turn %d was already taken out of the conversation by an earlier rewind", t.N)
	case t.Cycle < s.meta.Cycle:
		return fmt.Sprintf("turn %d belongs to cycle %d, and only turns of the current cycle %d can be rewound in the conversation; restore the files only", t.N, t.Cycle, s.meta.Cycle)
	}
	return fmt.Sprintf("turn %d is no longer in the conversation (a compaction removed it); restore the files only", t.N)
}

// Rewind puts the session back to the start of turn: with files, every
// file the session changed from then on gets its content of that moment
// back (created files are removed, deleted ones come back; files the
// agent never touched are never written); with chat, the turn's message
// and everything after it are superseded in one recorded rebuild — kept in
// the store and the export — and the checklist and working set return to
// what they were before the message. A file changed outside Tally since
// the agent last wrote it makes the rewind fail, with nothing changed and
// an error wrapping filehistory.ErrConflict, unless force is set. It fails
// with ErrBusy while a turn runs.
//
// The conversation can be rewound only to a turn of the current cycle
// still in the log (see RewindPlan.ChatErr); the files to any turn.
func (s *Session) Rewind(ctx context.Context, turn int, files, chat, force bool) (RewindResult, error) {
	end, ok := s.beginWork()
	if !ok {
		return RewindResult{}, ErrBusy
	}
	defer end()
	if !files && !chat {
		return RewindResult{}, errors.New("a rewind must restore the files, the conversation or both; choose at least one")
	}
	if err := ctx.Err(); err != nil {
		return RewindResult{}, err
	}
	t, err := s.turnFor(turn)
	if err != nil {
		return RewindResult{}, err
	}
	if chat && t.LogIndex < 0 {
		return RewindResult{}, fmt.Errorf("cannot rewind the conversation: %s", s.whyNotInLog(t))
	}
	var res RewindResult
	if files {
		ws, err := s.checkpoints()
		if err != nil {
			return res, err
		}
		plan, err := ws.Plan(s.meta.ID, turn)
		if err != nil {
			return res, err
		}
		if c := plan.Conflicts(); len(c) > 0 && !force {
			return res, fmt.Errorf("%s changed outside Tally since the agent wrote them, so nothing was rewound; review them and rewind with force to overwrite them: %w",
				strings.Join(c, ", "), filehistory.ErrConflict)
		}
		if res.Files, err = ws.Restore(plan, force); err != nil {
			return res, err
		}
	}
	if chat {
		if err := s.rewindChat(t, &res); err != nil {
			if files && len(res.Files.Restored) > 0 {
				err = fmt.Errorf("%w (the files were restored already)", err)
			}
			return res, err
		}
	}
	return res, nil
}

// rewindChat supersedes t's message and everything after it, restores
// the checklist and working set of that moment and marks the turns from
// t on as superseded, all in one rebuild.
func (s *Session) rewindChat(t Turn, res *RewindResult) error {
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

	var snap turnSnap
	data, err := s.cfg.Store.State(s.meta.ID, fmt.Sprintf(turnSnapKeyFmt, t.N))
	haveSnap := err == nil && len(data) > 0 && json.Unmarshal(data, &snap) == nil
	prevList, _ := s.checklist.MarshalJSON()
	prevWS := s.st.WorkingSet
	if haveSnap {
		if len(snap.Checklist) > 0 {
			if err := s.checklist.UnmarshalJSON(snap.Checklist); err != nil {
				haveSnap = false
			}
		}
		s.st.WorkingSet = WorkingSet{Paths: append([]string(nil), snap.WorkingSet...)}
	}
	if !haveSnap {
		res.Note = fmt.Sprintf("the checklist of turn %d was not recorded, so it was kept as it is", t.N)
		s.st.WorkingSet = workingSetOf(kept, s.st.WorkingSet)
	}
	turns := append([]Turn(nil), s.turns...)
	for i := range turns {
		if turns[i].N >= t.N {
			turns[i].Superseded = true
		}
	}
	list, _ := s.checklist.MarshalJSON()
	prevTurns := s.turns
	s.turns = turns // published with the rebuild
	_, err = s.rebuild(rewrite.Request{Kind: rewrite.Rewind, Reason: fmt.Sprintf("rewind to turn %d", t.N), Messages: kept,
		Extra: func(tx *storage.Tx) error {
			if err := putJSON(tx, s.meta.ID, turnsKey, turns); err != nil {
				return err
			}
			return tx.PutState(s.meta.ID, checklistKey, list)
		}})
	if err != nil {
		_ = s.checklist.UnmarshalJSON(prevList)
		s.st.WorkingSet = prevWS
		s.turns = prevTurns
		return err
	}
	s.savedList = s.checklist.Version()
	s.emit(Event{Kind: EventChecklist, Checklist: s.checklist.Items()})
	res.Superseded = len(msgs) - t.LogIndex
	res.Text = text
	return nil
}

// Changes returns every file the session changed, with its diff against
// the session's first checkpoint, sorted by path; files back in their
// original state are left out. It does not wait for a running turn.
func (h Files) Changes() ([]filehistory.FileChange, error) {
	s := h.s
	ws, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	return ws.Changes(s.meta.ID)
}

// Since returns every file the session changed since the start of
// turn (see Turn.N), with its diff from then to now.
func (h Files) Since(turn int) ([]filehistory.FileChange, error) {
	s := h.s
	ws, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	return ws.ChangesSince(s.meta.ID, turn)
}

// Revert puts the workspace file rel (slash-separated, relative to
// the workspace) back to its state at the session's first checkpoint. A
// file changed outside Tally since the agent wrote it is refused with an
// error wrapping filehistory.ErrConflict unless force is set. It fails
// with ErrBusy while a turn runs.
func (h Files) Revert(rel string, force bool) (filehistory.Result, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return filehistory.Result{}, ErrBusy
	}
	defer end()
	ws, err := s.checkpoints()
	if err != nil {
		return filehistory.Result{}, err
	}
	return ws.RevertFile(s.meta.ID, rel, force)
}

// RevertAll puts every file the session changed back to its state at the
// session's first checkpoint, as RevertFile does for one; with a conflict
// and no force nothing is written. The conversation is left as it is.
func (h Files) RevertAll(force bool) (filehistory.Result, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return filehistory.Result{}, ErrBusy
	}
	defer end()
	ws, err := s.checkpoints()
	if err != nil {
		return filehistory.Result{}, err
	}
	turns, err := ws.Turns(s.meta.ID)
	if err != nil || len(turns) == 0 {
		return filehistory.Result{}, err
	}
	plan, err := ws.Plan(s.meta.ID, turns[0])
	if err != nil {
		return filehistory.Result{}, err
	}
	if c := plan.Conflicts(); len(c) > 0 && !force {
		return filehistory.Result{}, fmt.Errorf("%s changed outside Tally since the agent wrote them, so nothing was reverted; review them and revert with force to overwrite them: %w",
			strings.Join(c, ", "), filehistory.ErrConflict)
	}
	return ws.Restore(plan, force)
}

// Unrestorable returns the session's turns whose checkpoints lost content
// to the store's size limit (see filehistory.Workspace.Unrestorable).
func (h Files) Unrestorable() ([]int, error) {
	s := h.s
	ws, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	return ws.Unrestorable(s.meta.ID)
}
