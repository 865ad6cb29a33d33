package agent

import (
	"context"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/storage"
)

// warmUpText is the tiny tail of a warm-up request.
const warmUpText = "Cache warm-up request from the Tally runtime: reply with OK."

// WarmUp sends the session's stable prefix (system prompt and tool
// catalog) with a tiny tail, max_tokens 8 and temperature 0, so that the
// provider caches the prefix and the first real request is billed at the
// cache-hit price. Nothing is added to the conversation; the request is
// recorded in the ledger (kind "warmup") so its cost is shown.
func (s *Session) WarmUp(ctx context.Context) (ledger.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mcpHost{s}.sync() // the warmed prefix holds the MCP tools the first turn sends
	zero := float32(0)
	m := s.model()
	req := llm.Request{
		Model: m.ModelName, Tools: s.req.Catalog(), MaxTokens: 8, Temperature: &zero,
		Messages: []chat.Message{s.req.System(), {Role: chat.RoleUser, Content: warmUpText}},
	}
	resp, err := m.Model.Stream(ctx, m.keyed(s.meta.ID, ledger.KindWarmUp, req), llm.Callbacks{
		OnRetry: func(r llm.Retry) { s.emit(Event{Kind: EventRetry, Retry: &r}) },
	})
	if err != nil {
		return ledger.Row{}, err
	}
	row := s.newRow(ledger.KindWarmUp, resp, len(req.Messages), s.cfg.now())
	err = s.cfg.Store.Update(func(tx *storage.Tx) error { return addRow(tx, s.meta.ID, row) })
	s.emit(Event{Kind: EventUsage, Usage: s.usageOf(row, resp, true)})
	return row, err
}
