package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/purge"
)

// PurgePreview is a purge the model proposed, not yet applied.
type PurgePreview struct {
	purge.Plan
	logHash string // the log the plan was made from
	Errors  []string
}

// Preview shows the model a numbered list of the current cycle's
// messages with a temporary purge_context tool, collects the operations it
// proposes and returns the resulting plan. Nothing changes until
// ApplyPurge.
func (h Purge) Preview(ctx context.Context) (PurgePreview, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return PurgePreview{}, ErrBusy
	}
	defer end()
	msgs := s.log.Messages()
	if len(msgs) == 0 {
		return PurgePreview{}, errors.New("the conversation is empty; there is nothing to purge")
	}
	resp, err := s.metered(ledgerPurge).Stream(ctx, purge.Request(s.model().ModelName, s.st.System, msgs), llm.Callbacks{})
	if err != nil {
		return PurgePreview{}, fmt.Errorf("the purge request failed (%w); the history is unchanged", err)
	}
	ops, errs := purge.ParseOps(resp.ToolCalls)
	p := PurgePreview{Plan: purge.Apply(msgs, ops), logHash: s.log.Hash()}
	for _, e := range errs {
		p.Errors = append(p.Errors, e.Error())
	}
	return p, nil
}

// Apply applies a previewed purge as one recorded rebuild. It refuses
// a preview made from a history that has changed since.
func (h Purge) Apply(p PurgePreview) error {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return ErrBusy
	}
	defer end()
	if p.logHash == "" || p.logHash != s.log.Hash() {
		return errors.New("the history changed since this purge was previewed; preview it again")
	}
	if len(p.Changes) == 0 {
		return purge.ErrNothing
	}
	_, err := s.rebuild(rewrite{Kind: RebuildPurge, Reason: "purge", Messages: p.Messages})
	return err
}
