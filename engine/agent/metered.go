package agent

import (
	"context"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/storage"
)

// metered returns the model of kind's role (the session's own, or the
// one Config.Roles gives it, whose name then replaces the request's)
// wrapped so that every successful call is recorded in the ledger under
// kind: the engine's own requests (summaries, hand-off briefs, purges)
// cost money too, and the totals must say so.
func (s *Session) metered(kind ledger.Kind) llm.Model {
	m := s.roleModel(kind)
	return llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		if cb.OnRetry == nil {
			cb.OnRetry = func(r llm.Retry) { s.emit(Event{Kind: EventRetry, Retry: &r}) }
		}
		req.Model = m.ModelName
		resp, err := m.Model.Stream(ctx, m.keyed(s.meta.ID, kind, req), cb)
		if err != nil || resp == nil {
			return resp, err
		}
		row := s.newRow(kind, resp, len(req.Messages), s.cfg.now())
		// A ledger write failure must not lose the answer: the call is
		// already paid for, and the next commit surfaces store errors.
		_ = s.cfg.Store.Update(func(tx *storage.Tx) error { return addRow(tx, s.meta.ID, row) })
		return resp, nil
	})
}

// Metered is the model for an engine call of kind made for the session from outside it (memory proposals), each answer recorded in its ledger under kind.
func (h Audit) Metered(kind ledger.Kind) llm.Model { return h.s.metered(kind) }
