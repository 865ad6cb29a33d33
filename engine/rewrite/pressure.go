package rewrite

import (
	"context"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
)

// BeforeRequest runs before every request: at the cycle threshold the
// conversation rolls over into a new cycle; at the compaction threshold it
// compacts (Auto), asks first (Ask) or does nothing (Off). Tokens are the
// only signal. An automatic compaction runs only when it pays for itself
// (compact.PlanAuto: its cache bust and summary call against the tokens it
// saves over the requests expected before the ceiling) or once the level
// reaches the ceiling, and it aims well under the threshold. Breakers stop
// compaction that keeps failing, is undone within a few tool rounds, or
// keeps rewriting what the provider has cached.
func (r *Session) BeforeRequest(ctx context.Context) error {
	h := r.host
	st := h.State()
	level, _ := h.Level()
	if a := h.Anchor(); a.Valid() {
		billed, _, own := a.Parts()
		st.Breakers.Growth.Mark(billed, own, st.CycleRequests)
	}
	level += StatusReserve
	compactAt, cycleAt := r.Thresholds()
	if cycleAt > 0 && level >= cycleAt && (cycleAt <= compactAt || r.opt.Mode == Off || st.Breakers.AutoPaused()) {
		return r.roll(ctx, cycle.ModeAuto)
	}
	r.noticeSoon(level, compactAt)
	if level < compactAt {
		return nil
	}
	if st.Breakers.Armed {
		if paused, msg := st.Breakers.AtThreshold(); paused {
			h.Warn(msg)
		}
	}
	if r.opt.Mode == Off {
		return nil
	}
	if ok, why := st.Breakers.Allow(h.Now(), false); !ok {
		if why != "" && !r.turn.warnedBreaker {
			r.turn.warnedBreaker = true
			h.Warn(why)
		}
		return nil
	}
	if r.notice.postponed(level, compactAt, level >= r.forecast().Ceiling) {
		// "Not now": a step under the postponement's end reads and plans
		// nothing, however long the history.
		return nil
	}
	in := r.input(false)
	pinned := compact.PinnedTokens(in, compact.Pins(in))
	if !compact.ShouldCompact(level, pinned, compactAt) {
		return nil
	}
	plan := compact.PlanAuto(in, r.forecast())
	if d := plan.Auto; !d.Run {
		if d.Forced && d.Chosen < 0 && cycleAt > 0 {
			// At the ceiling no compaction frees enough: a new cycle
			// does.
			return r.roll(ctx, cycle.ModeAuto)
		}
		return nil
	}
	if r.opt.Mode == Ask {
		if r.turn.declined || r.opt.Asker == nil {
			// Headless: "ask" means never compact without a person.
			return nil
		}
		ok, err := r.opt.Asker.AskCompaction(ctx, plan)
		if err != nil {
			return err
		}
		if !ok {
			r.turn.declined = true
			return nil
		}
	}
	_, err := r.apply(ctx, in, plan, "auto compaction")
	if err != nil && ctx.Err() == nil {
		// A failed automatic compaction is not fatal: the request still
		// fits until the window itself is reached.
		h.Warn(err.Error())
		return nil
	}
	return err
}

// noticeSoon announces the coming compaction (Host.Soon) once per
// crossing of the notice mark: when the level is at or over the mark and
// under the threshold, and the gate would let an automatic compaction run
// (the mode is Auto, no breaker holds it, something is summable at the
// threshold, and some plan may run). The level falling under the mark
// again (a rebuild) re-arms the notice and ends a postponement. It decides
// once per crossing: when the gate says no at the mark, no notice follows
// for that crossing. Nothing in it changes the conversation or the next
// request.
func (r *Session) noticeSoon(level, compactAt int) {
	mark := int(float64(compactAt) * NoticeFraction)
	n := &r.notice
	n.mu.Lock()
	if level < mark {
		n.shown, n.postpone, n.from = false, false, 0
	}
	decided := n.shown || level < mark
	n.shown = n.shown || level >= mark
	n.mu.Unlock()
	if decided || level >= compactAt || compactAt <= 0 {
		return // a jump past the threshold compacts at once: its row tells
	}
	st := r.host.State()
	if r.opt.Mode != Auto || st.Breakers.AutoPaused() {
		return
	}
	if ok, _ := st.Breakers.Allow(r.host.Now(), false); !ok {
		return
	}
	in := r.input(false)
	if !compact.ShouldCompact(max(level, compactAt+1), compact.PinnedTokens(in, compact.Pins(in)), compactAt) {
		return
	}
	plan := compact.PlanAuto(in, r.forecast())
	if plan.Auto == nil || plan.Auto.Chosen < 0 {
		return
	}
	plan.Messages = cloneMessages(plan.Messages)
	plan.Tokens = append([]int(nil), plan.Tokens...)
	r.host.Soon(Notice{Level: level, Mark: mark, Threshold: compactAt, Plan: plan})
}

// postponed reports whether "Not now" holds back the automatic compaction
// that would run at level: until the level is PostponeStep of the
// threshold past where it was postponed (or past the threshold, whichever
// is higher). The ceiling (forced) always runs it; cycles and emergency
// recovery are not affected. Once the level is past the step the
// postponement is over: it skips one compaction, not every one.
func (n *notice) postponed(level, compactAt int, forced bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.postpone {
		return false
	}
	until := max(compactAt, n.from) + int(float64(compactAt)*PostponeStep)
	if forced || level >= until {
		n.postpone = false
		return false
	}
	return true
}

// Postpone answers the compaction notice with "Not now" at the context
// level level: the next automatic compaction is skipped until the level
// has risen a further PostponeStep of the threshold past the threshold
// (or past the level now, when that is higher). The ceiling still forces
// it, and cycles and emergency recovery still run. A rebuild that brings
// the level under the notice mark ends the postponement, and the next
// crossing sends a new notice. It never waits for a running turn, and it
// is not stored: a reopened session compacts as usual.
func (r *Session) Postpone(level int) {
	r.notice.mu.Lock()
	r.notice.postpone, r.notice.from = true, level+StatusReserve
	r.notice.mu.Unlock()
}
