package agent

import (
	"encoding/json"
	"fmt"
	"slices"

	openai "github.com/sashabaranov/go-openai"

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

// prepareRequest places the status for the coming request and records it.
// In tail mode the status rides at the end of the request only; in append
// mode it is committed to the log first.
//
// The returned restore must be called as soon as the request has been
// sent: when the status joins a user message at the end of the log, that
// message is merged in place for the request (see pushWire) and restore
// puts it back.
func (s *Session) prepareRequest() ([]openai.ChatCompletionMessage, func(), error) {
	rec := s.statusFor()
	data, _ := json.Marshal(rec)
	audit := func(tx *storage.Tx) error {
		_, err := tx.AddRecord(storage.KindStatus, s.meta.ID, data)
		return err
	}
	if s.cfg.StatusMode == StatusAppend {
		m := transcript.Injected(transcript.KindStatus, rec.Text, s.cfg.now())
		if err := s.commit([]transcript.Message{m}, audit); err != nil {
			return nil, nil, err
		}
		return s.reqMsgs, func() {}, nil
	}
	if err := s.cfg.Store.Update(func(tx *storage.Tx) error {
		if err := audit(tx); err != nil {
			return err
		}
		return putMeta(tx, s.meta, s.st)
	}); err != nil {
		return nil, nil, fmt.Errorf("agent: could not record the status block: %w", err)
	}
	tail := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: rec.Text}
	// After a user message the status joins it (see pushWire): merge it in
	// place for this request and put the message back afterwards.
	if n := len(s.reqMsgs); n > 1 && s.reqMsgs[n-1].Role == openai.ChatMessageRoleUser {
		arr, saved := s.reqMsgs, s.reqMsgs[n-1]
		arr[n-1] = joinUser(saved, tail)
		return arr, func() { arr[n-1] = saved }, nil
	}
	// Otherwise write it into the spare capacity past the end of the
	// request skeleton, without growing the skeleton: the next append
	// overwrites the slot. Growing happens in amortised steps, so the
	// request never copies the transcript.
	if cap(s.reqMsgs) == len(s.reqMsgs) {
		s.reqMsgs = slices.Grow(s.reqMsgs, len(s.reqMsgs)/4+16)
	}
	return append(s.reqMsgs, tail), func() {}, nil
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
