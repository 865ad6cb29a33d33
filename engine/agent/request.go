package agent

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// resetPrefix recomputes steps 1 and 2 (the prefix zone, its token count
// and fingerprint) from the stored system prompt and the tool registry;
// the next request rebuilds the skeleton from the log.
func (s *Session) resetPrefix() {
	s.req.Log = s.log
	b := s.req.SetPrefix(s.st.System, step.Tools(s.tools.Catalog()))
	s.prefixTok = transcript.WireTokens(s.req.System(), tokens.Count) + tokens.Count(string(b))
	s.fp = prompt.Fingerprints(s.st.System, s.st.Spans, s.req.Catalog())
	if s.sentFP.Combined == "" {
		// The prefix a reopened session last sent is the one it has now.
		s.sentFP, s.sentSystem = s.fp, s.st.System
	}
}

// nextRequest renders and records the status of the coming request,
// places it (step 7) and returns the request to send.
func (t *turnLoop) nextRequest() (llm.Request, error) {
	s := t.s
	mcpHost{s}.sync() // MCP tools that arrived since the last request (booked)
	if s.cfg.StatusMode == status.Off {
		return s.req.Assemble(s.model().ModelName, ""), nil
	}
	// The state is computed once per request (it reads .git/HEAD), and
	// whether the last block is still in the log is looked up once.
	cur := s.canonical(0)
	inLog := s.cfg.StatusMode != status.Tail && s.st.InLog(s.log)
	seenList := s.turn.statusTurn && s.turn.shownList == s.checklist.Version()
	if s.cfg.StatusMode == status.OnChange && !s.st.Changed(cur, inLog, seenList) {
		return s.req.Assemble(s.model().ModelName, ""), nil // the newest block in the log is current
	}
	rec := s.st.Next(cur, s.st.Requests+1, s.cfg.StatusMode, s.cfg.Renderer, s.defaultRenderer, inLog)
	data, _ := json.Marshal(rec)
	audit := func(tx *storage.Tx) error {
		_, err := tx.AddRecord(storage.KindStatus, s.meta.ID, data)
		return err
	}
	if s.cfg.StatusMode == status.Append || s.cfg.StatusMode == status.OnChange {
		s.st.LastStatus = &rec.State
		s.turn.statusTurn = true
		m := transcript.Injected(transcript.KindStatus, rec.Text, s.cfg.now())
		if err := s.commit([]transcript.Message{m}, audit); err != nil {
			return llm.Request{}, err
		}
		return s.req.Assemble(s.model().ModelName, ""), nil
	}
	if err := s.cfg.Store.Update(func(tx *storage.Tx) error {
		if err := audit(tx); err != nil {
			return err
		}
		return putMeta(tx, s.meta, s.st)
	}); err != nil {
		return llm.Request{}, fmt.Errorf("could not record the status block: %w", err)
	}
	return s.req.Assemble(s.model().ModelName, rec.Text), nil
}

// NextRequest returns the request the model would receive next, as a copy,
// with the status block the first request of the next turn would carry at
// the tail.
func (h Audit) NextRequest() llm.Request {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var req llm.Request
	if s.cfg.StatusMode == status.Tail {
		req = s.req.Assemble(s.model().ModelName, s.idleStatus())
	} else {
		req = s.req.Assemble(s.model().ModelName, "") // the status is in the log
	}
	req.Messages = slices.Clone(req.Messages)
	req.Encoded = llm.Encodings{} // made for the session's slice, not the copy
	return req
}
