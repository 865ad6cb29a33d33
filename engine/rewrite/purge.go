package rewrite

import (
	"context"
	"errors"
	"fmt"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/purge"
)

// ledgerPurge is the ledger kind of the purge's model call.
const ledgerPurge = "purge"

// PurgePreview is a purge the model proposed, not yet applied.
type PurgePreview struct {
	purge.Plan
	logHash string // the log the plan was made from
	Errors  []string
}

// PreviewPurge shows the model a numbered list of the current cycle's
// messages with a temporary purge_context tool, collects the operations
// it proposes and returns the resulting plan. Nothing changes until
// ApplyPurge.
func (r *Session) PreviewPurge(ctx context.Context) (PurgePreview, error) {
	h := r.host
	log := h.Log()
	msgs := log.Messages()
	if len(msgs) == 0 {
		return PurgePreview{}, errors.New("the conversation is empty; there is nothing to purge")
	}
	resp, err := h.Metered(ledgerPurge).Stream(ctx, purge.Request(h.Model().Name, h.System(), msgs), llm.Callbacks{})
	if err != nil {
		return PurgePreview{}, fmt.Errorf("the purge request failed (%w); the history is unchanged", err)
	}
	ops, errs := purge.ParseOps(resp.ToolCalls)
	p := PurgePreview{Plan: purge.Apply(msgs, ops), logHash: log.Hash()}
	for _, e := range errs {
		p.Errors = append(p.Errors, e.Error())
	}
	return p, nil
}

// ApplyPurge applies a previewed purge as one recorded rebuild. It
// refuses a preview made from a history that has changed since.
func (r *Session) ApplyPurge(p PurgePreview) error {
	if p.logHash == "" || p.logHash != r.host.Log().Hash() {
		return errors.New("the history changed since this purge was previewed; preview it again")
	}
	if len(p.Changes) == 0 {
		return purge.ErrNothing
	}
	_, err := r.host.Rebuild(Request{Kind: Purge, Reason: "purge", Messages: p.Messages})
	return err
}
