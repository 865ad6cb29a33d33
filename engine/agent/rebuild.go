package agent

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// rebuild is the one entrance of every rewrite of the conversation —
// compaction, emergency recovery, purge, rewind and a new cycle. It is the
// only writer of a rewritten log, a rebuild record and the prompt state:
// in one transaction it replaces the cycle's log (or starts the next
// cycle's), keeps what the rewrite removes, records the RebuildRecord and
// stores the system prompt, derived by one rule from the state (see
// systemOf); it books a changed system prompt, invalidates the usage
// anchor, counts a cache-busting rewrite for the thrash breaker and
// publishes the event with what the rewrite cost in cache terms. When the
// store refuses, nothing changes, in memory either.
func (s *Session) rebuild(w rewrite.Request) (rewrite.Info, error) {
	before, _ := s.level()
	now := s.cfg.now()
	oldLog := s.log.Messages()
	// The previous request held the first sent messages of the log: the
	// anchor says how many; without one, count every message as sent.
	sent := len(oldLog)
	if s.anchor.Valid() {
		_, sent, _ = s.anchor.Parts()
	}
	prevMeta, prevState := s.meta, s.st
	if w.State != nil {
		w.State(&s.st.State)
	}
	s.st.System, s.st.Spans = systemOf(s.st)
	systemChanged := s.st.System != prevState.System
	first := transcript.FirstDifference(oldLog, w.Messages)
	rec := s.log.Rebuild(w.Reason, w.Messages, now)
	gone, from := transcript.Match(oldLog, s.log.Messages())
	if w.Cycle != 0 {
		s.meta.Cycle, gone, rec.Start = w.Cycle, nil, true
		from = slices.Repeat([]int{-1}, s.log.Len()) // a new cycle keeps nothing of the last one's log
	} else if s.anchor.Valid() {
		billed, _, own := s.anchor.Parts()
		s.st.Breakers.Growth.Rebase(billed, own, s.st.CycleRequests)
	} else {
		s.st.Breakers.Growth.Rebase(0, 0, 0)
	}
	rec.Cycle, rec.Detail, rec.From = s.meta.Cycle, w.Detail, from
	if systemChanged && rec.Detail == "" {
		rec.Detail = "system prompt changed (booked)"
	}
	if s.anchor.Valid() {
		billed, _, own := s.anchor.Parts()
		_, ratio := s.rw.Measured()
		if ratio <= 0 && own > 0 { // the planner's rule when nothing is measured
			ratio = min(max(float64(billed)/float64(own), 0.25), 4)
		}
		s.st.Calibration = &calibration{Billed: billed, Est: own, Ratio: ratio}
	}
	s.anchor.Invalidate()
	s.st.Anchor = nil
	s.resetPrefix() // the level after counts the new prefix
	after, _ := s.level()
	info := rewrite.Info{Kind: w.Kind, Reason: w.Reason, TokensBefore: before, TokensAfter: after, Summary: w.Summary, Cycle: s.meta.Cycle}
	if w.Cycle == 0 {
		invalidated := 0
		switch {
		case systemChanged:
			invalidated = after
		case first >= 0:
			for i := first; i < s.log.Len(); i++ {
				invalidated += s.log.At(i).Tokens
			}
		}
		cost := compact.NewCacheCost(invalidated, w.Call.CallTokens, w.Call.CallMissTokens, before-after, s.model().HitPrice, s.model().MissPrice)
		info.MissTokens, info.PaysBackAfter = cost.MissTokens, cost.BreakEven
		info.CacheBusting = systemChanged || (first >= 0 && first < sent)
	}
	if w.Describe != nil {
		w.Describe(&info)
	}
	rec.Shown, _ = json.Marshal(info) // a reopened session shows the row the host was shown
	err := s.cfg.Store.Update(func(tx *storage.Tx) error {
		data := make([][]byte, 0, s.log.Len())
		for i := 0; i < s.log.Len(); i++ {
			b, err := transcript.Encode(s.log.At(i).Msg)
			if err != nil {
				return err
			}
			data = append(data, b)
		}
		if len(gone) > 0 {
			// Keep what the rewrite removes: nothing committed is lost.
			blob, err := json.Marshal(gone)
			if err != nil {
				return err
			}
			if rec.Superseded, err = tx.PutBlob(blob); err != nil {
				return err
			}
			rec.SupersededCount = len(gone)
		}
		if err := tx.ReplaceLog(s.meta.ID, s.meta.Cycle, data); err != nil {
			return err
		}
		if w.Extra != nil {
			if err := w.Extra(tx); err != nil {
				return err
			}
		}
		r, _ := json.Marshal(rec)
		if _, err := tx.AddRecord(storage.KindRebuild, s.meta.ID, r); err != nil {
			return err
		}
		if err := putPrompt(tx, s.meta.ID, s.st); err != nil {
			return err
		}
		return putMeta(tx, s.meta, s.st)
	})
	if err != nil {
		s.meta, s.st = prevMeta, prevState
		s.log.Rebuild("rollback after a failed rebuild", oldLog, now)
		s.resetPrefix()
		return rewrite.Info{}, fmt.Errorf("could not save the rewritten history (%w); nothing was changed", err)
	}
	if systemChanged {
		s.booked = w.Reason // an intended change: the drift report marks it as booked
	}
	s.publish()
	s.pendingRebuild = w.Reason
	if info.CacheBusting {
		if paused, msg := s.st.Breakers.Busted(s.st.Requests); paused {
			s.rw.Warned() // said once, not again before the next request
			s.emit(Event{Kind: EventError, Err: msg})
		}
	}
	s.emit(Event{Kind: EventRebuild, Reason: w.Reason, Rebuild: &info})
	return info, nil
}

// summarySection is the name of the system prompt's compaction summary.
const summarySection = "compaction_summary"

// systemOf is the one rule of the system prompt during a session: the
// cycle's base prompt, with the compaction summary, when there is one,
// joined after it as its last, dynamic section.
func systemOf(st state) (string, []prompt.Span) {
	return prompt.Extend(st.Base, st.BaseSpans, prompt.Section{Name: summarySection, Tier: prompt.Dynamic, Text: st.Summary})
}
