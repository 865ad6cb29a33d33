package agent

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// StatusRecord is the audit record of the status sent with one request:
// the exact text and the canonical state it was rendered from.
type StatusRecord struct {
	Request int          `json:"request"`
	Mode    StatusMode   `json:"mode"`
	Text    string       `json:"text"`
	State   status.State `json:"state"`
	// Base is the state of the block this one is a delta of (on-change
	// placement); nil for a full block.
	Base *status.State `json:"base,omitempty"`
}

// FullStatusEvery is how many delta blocks may follow a full one in the
// on-change placement before the next block is full again.
const FullStatusEvery = 8

// canonical computes the run state for the next status block. It reads
// only engine-owned counters and code-read facts.
func (s *Session) canonical(version int64) status.State {
	st := status.State{
		Version:   version,
		ToolCalls: status.Budget{Used: s.turn.toolCalls, Limit: s.cfg.ToolCallLimit},
		Steps:     status.Budget{Used: s.turn.steps, Limit: s.cfg.MaxSteps},
		Cwd:       s.meta.Workspace,
		Branch:    status.GitBranch(s.meta.Workspace),
		Alerts:    append(s.alerts(), s.subs.RunningAlerts()...),
	}
	st.Goals, st.Done = s.goals()
	st.Phase = status.PhaseOf(st)
	return st
}

// statusFor renders the next status block and returns it with its audit
// record. It advances state_version.
func (s *Session) statusFor(st status.State, lastInLog bool) StatusRecord {
	s.st.StatusVersion++
	st.Version = s.st.StatusVersion
	rec := StatusRecord{Request: s.st.Requests + 1, Mode: s.cfg.StatusMode, State: st}
	if base := s.deltaBase(lastInLog); base != nil {
		if text, err := status.RenderDelta(*base, st); err == nil {
			rec.Text, rec.Base = text, base
			s.st.StatusDeltas++
			return rec
		}
	}
	rec.Text = status.Slot(s.cfg.Renderer, st)
	s.st.StatusDeltas = 0
	return rec
}

// deltaBase returns the state the next on-change block may be a delta of:
// the last block's, while it is still in the log (lastInLog), fewer than
// FullStatusEvery deltas followed the last full block, and the default
// renderer is in use; nil means the next block is full.
func (s *Session) deltaBase(lastInLog bool) *status.State {
	if s.cfg.StatusMode != StatusOnChange || !s.defaultRenderer || s.st.LastStatus == nil ||
		s.st.StatusDeltas >= FullStatusEvery-1 || !lastInLog {
		return nil
	}
	base := *s.st.LastStatus
	return &base
}

// StatusAudit is the result of re-rendering recorded status blocks.
type StatusAudit struct {
	Checked    int      `json:"checked"`
	Mismatches []string `json:"mismatches,omitempty"`
	Last       string   `json:"last,omitempty"` // the last status text sent
}

// AuditStatus re-renders every recorded status from its recorded canonical
// state and reports any that differ from the text that was sent.
func (s *Session) AuditStatus() (StatusAudit, error) {
	recs, err := s.cfg.Store.Records(storage.KindStatus, s.meta.ID)
	if err != nil {
		return StatusAudit{}, err
	}
	var a StatusAudit
	for _, r := range recs {
		var sr StatusRecord
		if err := json.Unmarshal(r.Data, &sr); err != nil {
			a.Mismatches = append(a.Mismatches, fmt.Sprintf("record %d is unreadable: %v", r.Seq, err))
			continue
		}
		a.Checked++
		a.Last = sr.Text
		if sr.Base != nil {
			if want, err := status.RenderDelta(*sr.Base, sr.State); err != nil || want != sr.Text {
				a.Mismatches = append(a.Mismatches, fmt.Sprintf("request %d: the delta block disagrees with its recorded states", sr.Request))
			}
			continue
		}
		if err := status.Verify(s.cfg.Renderer, sr.Text, sr.State); err != nil {
			a.Mismatches = append(a.Mismatches, fmt.Sprintf("request %d: %v", sr.Request, err))
		}
	}
	return a, nil
}

// NextStatus renders the status the next request would carry, without
// advancing state_version.
func (s *Session) NextStatus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idleStatus()
}

// idleStatus renders the status the first request of the next turn would
// carry: a fresh turn's counters on the current checklist.
func (s *Session) idleStatus() string {
	saved := s.turn
	s.turn = turnState{steps: 1}
	defer func() { s.turn = saved }()
	return status.Slot(s.cfg.Renderer, s.canonical(s.st.StatusVersion+1))
}

// statusChanged reports whether an on-change session must append a status
// block before the next request: when no block of this session is in the
// log any more (a new session, a compaction or a cycle dropped it), or when
// the state differs materially from the last block's — its phase, goals,
// progress, alerts, folder or branch — except a checklist change the
// model's own checklist call made in a turn that already has a block,
// since that call's result showed the model the list as it now is. Budget counts alone do not count (the
// phase turns to wrap_up when steps run low), so the counts a block shows
// are those of the request it was appended for.
func (s *Session) statusChanged(cur status.State, lastInLog bool) bool {
	last := s.st.LastStatus
	if last == nil || !lastInLog {
		return true
	}
	if sameMaterial(*last, cur) {
		return false
	}
	// A change to the checklist alone, made by the model's own checklist
	// call in this turn, was just shown to it by that call's result (the
	// list's snapshot): the next block carries it, at the next other
	// change or the next turn.
	goalsOnly := *last
	goalsOnly.Goals, goalsOnly.Done, goalsOnly.Phase = cur.Goals, cur.Done, cur.Phase
	return !(s.turn.statusTurn && s.turn.shownList == s.checklist.Version() && sameMaterial(goalsOnly, cur))
}

// lastStatusInLog reports whether the log still holds a status block
// rendered from s.st.LastStatus.
func (s *Session) lastStatusInLog() bool {
	want := s.st.LastStatus.Version
	for i := s.log.Len() - 1; i >= 0; i-- {
		m := &s.log.At(i).Msg
		if m.Kind != transcript.KindStatus {
			continue
		}
		v, ok := status.Version(m.Text())
		return ok && v == want
	}
	return false
}

// sameMaterial compares two states on what the model acts on. Budget
// counts are not compared: running low on steps changes the phase to
// wrap_up, which is.
func sameMaterial(a, b status.State) bool {
	return a.Phase == b.Phase && a.Done == b.Done && a.Cwd == b.Cwd && a.Branch == b.Branch &&
		slices.Equal(a.Goals, b.Goals) && slices.Equal(a.Alerts, b.Alerts)
}
