package agent

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/storage"
)

// StatusRecord is the audit record of the status sent with one request:
// the exact text and the canonical state it was rendered from.
type StatusRecord struct {
	Request int          `json:"request"`
	Mode    StatusMode   `json:"mode"`
	Text    string       `json:"text"`
	State   status.State `json:"state"`
}

// canonical computes the run state for the next status block. It reads
// only engine-owned counters and code-read facts.
func (s *Session) canonical(version int64) status.State {
	st := status.State{
		Version:   version,
		ToolCalls: status.Budget{Used: s.turn.toolCalls, Limit: s.cfg.ToolCallLimit},
		Steps:     status.Budget{Used: s.turn.steps, Limit: s.cfg.MaxSteps},
		Cwd:       s.meta.Workspace,
		Branch:    status.GitBranch(s.meta.Workspace),
		Alerts:    s.alerts(),
	}
	st.Goals, st.Done = s.goals()
	st.Phase = status.PhaseOf(st)
	return st
}

// statusFor renders the next status block and returns it with its audit
// record. It advances state_version.
func (s *Session) statusFor() StatusRecord {
	s.st.StatusVersion++
	st := s.canonical(s.st.StatusVersion)
	return StatusRecord{Request: s.st.Requests + 1, Mode: s.cfg.StatusMode, Text: status.Slot(s.cfg.Renderer, st), State: st}
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
