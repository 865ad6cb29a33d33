package agent

import (
	"context"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Preview returns the dry run of a manual compaction now (see
// rewrite.Session.Preview). Nothing changes.
func (h Compaction) Preview() (compact.Plan, error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rw.Preview()
}

// Apply applies a compaction now, as the user asked (see
// rewrite.Session.Compact). It fails at once with ErrBusy while a turn
// runs.
func (h Compaction) Apply(ctx context.Context) (rewrite.Result, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return rewrite.Result{}, ErrBusy
	}
	defer end()
	return s.rw.Compact(ctx)
}

// Postpone answers the compaction notice with "Not now" (see
// rewrite.Session.Postpone). It never waits for a running turn.
func (h Compaction) Postpone() {
	h.s.rw.Postpone(h.s.Snapshot().Level)
}

// KeepForecast returns the choices of "keep the context under" with their
// forecasts (see rewrite.Session.KeepForecast). It never waits.
func (h Compaction) KeepForecast() []rewrite.KeepOption { return h.s.rw.KeepForecast() }

// KeepReason says why compaction triggers where it does (see
// rewrite.Session.KeepReason). It never waits.
func (h Compaction) KeepReason() string { return h.s.rw.KeepReason() }

// NewCycle closes the current cycle now and opens the next one, as the
// user asked. It fails at once with ErrBusy while a turn runs.
func (h Compaction) NewCycle(ctx context.Context) error {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return ErrBusy
	}
	defer end()
	return s.rw.NewCycle(ctx)
}

// Preview shows the model the current cycle's messages and returns the
// purge it proposes (see rewrite.Session.PreviewPurge). Nothing changes
// until Apply. It fails at once with ErrBusy while a turn runs.
func (h Purge) Preview(ctx context.Context) (rewrite.PurgePreview, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return rewrite.PurgePreview{}, ErrBusy
	}
	defer end()
	return s.rw.PreviewPurge(ctx)
}

// Apply applies a previewed purge as one recorded rebuild; it refuses a
// preview made from a history that has changed since. It fails at once
// with ErrBusy while a turn runs.
func (h Purge) Apply(p rewrite.PurgePreview) error {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return ErrBusy
	}
	defer end()
	return s.rw.ApplyPurge(p)
}

// workingSetOf rebuilds the working set from the paths msgs still
// mention, in the order of prev where it knew them.
func workingSetOf(msgs []transcript.Message, prev status.WorkingSet) status.WorkingSet {
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, p := range m.Paths {
			seen[p] = true
		}
		if m.IsPlainUserText() {
			for _, p := range status.PathsIn(m.Body()) {
				seen[p] = true
			}
		}
	}
	var ws status.WorkingSet
	for _, p := range prev.Paths {
		if seen[p] {
			ws.Touch(p)
		}
	}
	return ws
}

// PastRebuild is a rewrite of the current cycle's log, with the messages it
// removed or changed, for showing the whole conversation again.
type PastRebuild struct {
	Record     transcript.RebuildRecord `json:"record"`
	Superseded []transcript.Message     `json:"superseded"`
	// Gone is Superseded with each message's index in the log before the
	// rebuild, for transcript.History.
	Gone []transcript.Superseded `json:"gone"`
}

// History returns the rebuilds of the current cycle, oldest first, each
// with the messages it superseded. Together with Messages it is everything
// the cycle ever held.
func (h Compaction) History() ([]PastRebuild, error) {
	s := h.s
	cycleNow := s.Snapshot().Meta.Cycle // without waiting for a running turn
	var out []PastRebuild
	err := s.cfg.Store.View(func(tx *storage.Tx) error {
		recs, err := tx.Records(storage.KindRebuild, s.meta.ID)
		if err != nil {
			return err
		}
		for _, r := range recs {
			rw, ok, err := transcript.ReadRewrite(r.Data, tx.Blob, func(rec transcript.RebuildRecord) bool { return rec.Cycle == cycleNow })
			if err != nil {
				return err
			} else if !ok {
				continue
			}
			p := PastRebuild{Record: rw.Record, Gone: rw.Gone}
			for _, g := range rw.Gone {
				p.Superseded = append(p.Superseded, g.Message)
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
