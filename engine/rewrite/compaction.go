package rewrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/memory"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// readMemory returns the workspace's MemoryFile, redacted and neutralised,
// or "". It is read by the one reader of memory files (memory.Read): only
// when it is a regular file inside the workspace (not a symlink, FIFO or
// device), at most MaxMemoryBytes of it.
func readMemory(workspace string) string {
	return transcript.Neutralize(memory.Read(workspace, MemoryFile, MaxMemoryBytes))
}

// tokensOf returns the count the log keeps for each message
// (transcript.Entry.Tokens): the one count the gauge, the compaction
// planner and its preview, and purge all use.
func tokensOf(log *transcript.AppendLog) []int {
	out := make([]int, log.Len())
	for i := range out {
		out[i] = log.At(i).Tokens
	}
	return out
}

// input gathers what the compaction planner needs.
func (r *Session) input(force bool) compact.Input {
	h := r.host
	st := h.State()
	log := h.Log()
	compactAt, _ := r.Thresholds()
	w, _ := h.Window()
	m := h.Model()
	in := compact.Input{
		Messages:        log.Messages(),
		Tokens:          tokensOf(log),
		Wire:            log.AppendWire(nil),
		PrefixTokens:    h.PrefixTokens(),
		Threshold:       compactAt,
		Window:          w,
		WorkingSet:      append([]string(nil), h.WorkingSet()...),
		Now:             h.Now(),
		PreviousSummary: st.Summary,
		Force:           force,
		HitPrice:        m.HitPrice,
		MissPrice:       m.MissPrice,
		Record:          st.Carry.Record,
		Earlier:         st.Carry.Earlier,
		TurnBase:        st.Carry.TurnBase,
		RemovedTurns:    st.Carry.RemovedTurns,
		NoFacts:         r.opt.NoFacts,
	}
	in.Level, _ = h.Level()
	_, in.Ratio = r.Measured()
	in.Memory = readMemory(h.Meta().Workspace)
	for _, it := range h.Checklist() {
		if it.Status != todo.Completed {
			mark := "[ ]"
			if it.Status == todo.InProgress {
				mark = "[~]"
			}
			in.Reminders.Checklist = append(in.Reminders.Checklist, fmt.Sprintf("%s #%s %s", mark, it.ID, it.Content))
		}
	}
	in.Reminders.WorkingSet = in.WorkingSet
	in.Reminders.At = in.Now
	msgs := in.Messages
	for i, m := range msgs {
		if m.Role != transcript.Tool || m.ToolName != "read_file" || m.IsError {
			continue
		}
		var p struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(m.Args), &p) == nil && p.Path != "" {
			in.Reminders.Reads = append(in.Reminders.Reads, compact.FileRead{Path: p.Path, Text: msgs[i].Text()})
		}
	}
	return in
}

// Preview returns the dry run of a manual compaction now: what each layer
// would do, the pins, the cache cost and when it pays back, with the
// number of requests expected before the ceiling (Plan.Cache.Horizon).
// Nothing changes.
func (r *Session) Preview() (compact.Plan, error) {
	if r.host.Log().Len() == 0 {
		return compact.Plan{}, ErrNothingToCompact
	}
	plan := compact.PlanCascade(r.input(true))
	f := r.forecast()
	plan.Cache.Horizon = compact.Horizon(plan.TokensBefore, f.Ceiling, f.Growth)
	return plan, nil
}

// Compact applies a compaction now, as the user asked: it bypasses the
// failure breaker and runs even below the threshold. It may call the model
// for a summary.
func (r *Session) Compact(ctx context.Context) (Result, error) {
	if r.host.Log().Len() == 0 {
		return Result{}, ErrNothingToCompact
	}
	in := r.input(true)
	return r.apply(ctx, in, compact.PlanCascade(in), "manual compaction")
}

// apply applies plan, made from in (see input): it summarises if needed
// and rebuilds the log. A forced input is a compaction someone asked for:
// when it changes nothing that is reported, not counted as a failure.
func (r *Session) apply(ctx context.Context, in compact.Input, plan compact.Plan, reason string) (Result, error) {
	h := r.host
	st := h.State()
	h.PreCompact(ctx, reason == "manual compaction")
	res := Result{Plan: plan, TokensBefore: plan.TokensBefore}
	summary := plan.Summary
	if plan.NeedsSummary && summary == "" {
		var err error
		summary, err = compact.Summarize(ctx, h.Metered(ledger.KindSummary), in, plan, h.Model().Name, h.System(), h.Catalog())
		if err != nil {
			if ctx.Err() == nil {
				st.Breakers.Failed(h.Now())
			}
			return res, fmt.Errorf("compaction failed while summarising (%w); the history is unchanged", err)
		}
	}
	out := compact.Apply(in, plan, summary)
	if out.Source == "" && !changed(in.Messages, out.Messages) {
		if out.SummaryRejected {
			st.Breakers.Failed(h.Now())
			return res, ErrSummaryTooLong
		}
		if in.Force {
			return res, ErrNothingToCompact
		}
		st.Breakers.Failed(h.Now())
		return res, errors.New("compaction found nothing to clear or summarise")
	}
	// Every dropped message is kept as a blob, so the handle the index
	// gives it reads it back (retrieve_tool_result).
	keepDropped := func(tx *storage.Tx) error {
		for _, d := range out.Dropped {
			if _, err := tx.PutBlob([]byte(d.Text)); err != nil {
				return err
			}
		}
		return nil
	}
	info, err := h.Rebuild(Request{Kind: Compaction, Reason: reason, Messages: out.Messages,
		State: func(st *State) {
			if out.SummarySection != "" {
				st.Summary = out.SummarySection
			}
			st.Carry = Carry{Record: out.Record, Earlier: out.Earlier, TurnBase: out.TurnBase, RemovedTurns: out.RemovedTurns}
		},
		Summary: summary, Call: plan.Cache, Extra: keepDropped,
		Describe: func(info *Info) {
			f := plan.Fidelity
			info.Fidelity = &f
			if !in.NoFacts {
				info.Record = out.Record.Render(compact.RecordTokens)
			}
		}})
	if err != nil {
		return res, err
	}
	h.State().Breakers.Compacted()
	res.Applied, res.Source = true, out.Source
	res.TokensAfter = info.TokensAfter
	res.MissTokens, res.PaysBackAfter = info.MissTokens, info.PaysBackAfter
	h.Compacted(ctx, out.Source != "")
	return res, nil
}

func changed(a, b []transcript.Message) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Text() != b[i].Text() {
			return true
		}
	}
	return false
}

// cloneMessages returns deep copies of msgs, for an event.
func cloneMessages(msgs []transcript.Message) []transcript.Message {
	out := make([]transcript.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m.Clone()
	}
	return out
}

// IdleMicro runs at the start of a turn: after compact.MicroIdle without
// a reply the provider's cache has expired anyway, so clearing stale tool
// results now costs no extra cache miss. Only the micro-compact layer
// runs.
func (r *Session) IdleMicro() error {
	if r.opt.Mode == Off {
		return nil
	}
	// Decide from the log alone; gathering the planner's input (a copy of
	// the log, MEMORY.md) is only worth it after a real pause.
	log := r.host.Log()
	var last time.Time
	for i := log.Len() - 1; i >= 0; i-- {
		if m := &log.At(i).Msg; m.Role == transcript.Assistant {
			last = m.Time
			break
		}
	}
	if last.IsZero() || r.host.Now().Sub(last) < compact.MicroIdle {
		return nil
	}
	in := r.input(false)
	pins := compact.MechanicalPins(compact.Pins(in))
	in.Force = true // the cache is cold: clear every stale result, not just enough
	out, rep := compact.Micro(in, pins)
	if len(rep.Changes) == 0 {
		return nil
	}
	_, err := r.host.Rebuild(Request{Kind: Compaction, Reason: "idle micro-compact", Messages: out.Messages})
	return err
}

// Emergency recovers from a provider's "context length exceeded": a
// forced compaction, then hard truncation from the front if that is not
// enough. At most compact.MaxEmergencyPerTurn recoveries run per turn.
func (r *Session) Emergency(ctx context.Context, cause error) error {
	h := r.host
	if r.turn.emergencies >= compact.MaxEmergencyPerTurn {
		return fmt.Errorf("the request is still too long for the model after %d emergency recoveries (%w); start a new cycle or session", r.turn.emergencies, cause)
	}
	r.turn.emergencies++
	r.turn.rejectedAt, _ = h.Level()
	in := r.input(true)
	res, err := r.apply(ctx, in, compact.PlanCascade(in), "emergency compaction")
	if err != nil && ctx.Err() != nil {
		return err
	}
	compacted := err == nil && res.Applied
	// The provider counts more than our estimate does: aim a quarter
	// below the level it rejected, or at the threshold if that is lower.
	level, _ := h.Level()
	compactAt, _ := r.Thresholds()
	target := min(compactAt, r.turn.rejectedAt*3/4)
	if r.turn.rejectedAt == 0 {
		target = compactAt
	}
	if level+StatusReserve <= target {
		return nil
	}
	// The level may be in the provider's units (anchored) and the log's
	// counts are ours: remove the excess scaled to our units.
	log := h.Log()
	est := h.PrefixTokens() + log.Tokens()
	ratio := 1.0
	if est > 0 && level > est {
		ratio = float64(level) / float64(est)
	}
	excess := level + StatusReserve - target
	budget := log.Tokens() - int(float64(excess)/ratio) - 1
	kept, dropped := compact.Truncate(log.Messages(), tokensOf(log), max(budget, 0))
	if dropped == 0 && compacted {
		return nil // the compaction shrank it; let the retry tell
	}
	if dropped == 0 {
		return fmt.Errorf("the request is too long for the model, and after emergency recovery nothing more can be dropped (%w); start a new cycle or session", cause)
	}
	_, err = h.Rebuild(Request{Kind: Emergency, Reason: "emergency truncation", Messages: kept})
	return err
}
