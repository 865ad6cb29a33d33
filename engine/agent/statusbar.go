package agent

import (
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/storage"
)

// canonical computes the run state for the next status block. It reads
// only engine-owned counters and code-read facts.
func (s *Session) canonical(version int64) status.State {
	st := status.State{
		Version:   version,
		ToolCalls: status.Budget{Used: s.turn.toolCalls, Limit: s.cfg.ToolCallLimit},
		Steps:     status.Budget{Used: s.turn.steps, Limit: s.cfg.MaxSteps},
		Cwd:       s.meta.Workspace,
		Roots:     s.st.Roots,
		Branch:    status.GitBranch(s.meta.Workspace),
		Alerts:    append(s.alerts(), s.subs.RunningAlerts()...),
	}
	st.Goals, st.Done = goalsOf(s.checklist.Items())
	st.Phase = status.PhaseOf(st)
	return st
}

// Status re-renders every recorded status from its recorded canonical
// state and reports any that differ from the text that was sent.
func (h Audit) Status() (status.Audit, error) {
	s := h.s
	recs, err := s.cfg.Store.Records(storage.KindStatus, s.meta.ID)
	if err != nil {
		return status.Audit{}, err
	}
	return status.AuditRecords(s.cfg.Renderer, recs), nil
}

// NextStatus renders the status the next request would carry, without
// advancing state_version.
func (h Audit) NextStatus() string {
	s := h.s
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
