package agent

import (
	"encoding/json"
	"time"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/storage"
)

// newRow is the one constructor of a ledger row: what response resp to a request of messages messages cost, made at now
// for kind by the model of that role (see roleModel) or the fallback that served it, with the effort sent. The caller
// fills what only it knows (request number, level, drift, rebuild, sub-agent).
func (s *Session) newRow(kind ledger.Kind, resp *llm.Response, messages int, now time.Time) ledger.Row {
	u := resp.Usage
	return ledger.Row{Time: now, Model: s.roleModel(kind).ModelName, Kind: kind,
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		CacheHitTokens: u.CacheHitTokens, CacheMissTokens: u.CacheMissTokens, CacheReported: u.CacheReported,
		DurationMS: resp.Duration.Milliseconds(), Messages: messages, CacheRule: s.model().CacheRule}.Served(resp.Model, resp.Fallback, string(resp.Effort))
}

// addRow stores row in the ledger of session id within tx.
func addRow(tx *storage.Tx, id string, row ledger.Row) error {
	data, err := json.Marshal(row)
	if err != nil {
		return err
	}
	_, err = tx.AddRecord(storage.KindLedger, id, data)
	return err
}

// usageOf is the usage event of committed row, the response it came from
// and the level it left: the receiver displays row and derives nothing.
func (s *Session) usageOf(row ledger.Row, resp *llm.Response, first bool) *Usage {
	level, exact := s.level()
	compactAt, cycleAt := s.rw.Thresholds()
	u := resp.Usage
	return &Usage{Row: row, Exact: exact, Model: s.model().ModelName, CompactAt: compactAt, CycleAt: cycleAt,
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		CacheHitTokens: u.CacheHitTokens, CacheMissTokens: u.CacheMissTokens, CacheReported: u.CacheReported,
		ContextTokens: level, Window: s.model().window(), Duration: resp.Duration, Attempts: resp.Attempts, First: first,
		WarmUp: row.Kind == ledger.KindWarmUp, Note: u.Note}
}
