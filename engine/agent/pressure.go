package agent

import (
	"context"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
)

// cycleThreshold is the level at which a new cycle starts, or 0 when
// cycles are off.
func (s *Session) cycleThreshold() int {
	_, c := s.Thresholds()
	return c
}

// checkPressure runs before every request: at the cycle threshold the
// session rolls over into a new cycle; at the compaction threshold it
// compacts (auto), asks first (ask) or does nothing (off). Tokens are the
// only signal. An automatic compaction runs only when it pays for itself
// (compact.PlanAuto: its cache bust and summary call against the tokens it
// saves over the requests expected before the ceiling) or once the level
// reaches the ceiling, and it aims well under the threshold. Breakers stop
// compaction that keeps failing, is undone within a few tool rounds, or
// keeps rewriting what the provider has cached.
func (s *Session) checkPressure(ctx context.Context) error {
	level, _ := s.level()
	if s.anchor.Valid() {
		billed, _, own := s.anchor.Parts()
		s.st.Breakers.Growth.Mark(billed, own, s.st.CycleRequests)
	}
	level += statusReserve
	compactAt, cycleAt := s.compactionThreshold(), s.cycleThreshold()
	if cycleAt > 0 && level >= cycleAt && (cycleAt <= compactAt || s.cfg.Compaction == CompactOff || s.st.Breakers.AutoPaused()) {
		return s.rollCycle(ctx, cycle.ModeAuto)
	}
	s.noticeSoon(level, compactAt)
	if level < compactAt {
		return nil
	}
	if s.st.Breakers.Armed {
		if paused, msg := s.st.Breakers.AtThreshold(); paused {
			s.emit(Event{Kind: EventError, Err: msg})
		}
	}
	if s.cfg.Compaction == CompactOff {
		return nil
	}
	if ok, why := s.st.Breakers.Allow(s.cfg.now(), false); !ok {
		if why != "" && !s.turn.warnedBreaker {
			s.turn.warnedBreaker = true
			s.emit(Event{Kind: EventError, Err: why})
		}
		return nil
	}
	in := s.compactInput(false)
	pinned := compact.PinnedTokens(in, compact.Pins(in))
	if !compact.ShouldCompact(level, pinned, compactAt) {
		return nil
	}
	plan := compact.PlanAuto(in, s.forecast())
	if d := plan.Auto; !d.Run {
		if d.Forced && d.Chosen < 0 && cycleAt > 0 {
			// At the ceiling no compaction frees enough: a new cycle
			// does.
			return s.rollCycle(ctx, cycle.ModeAuto)
		}
		return nil
	}
	if s.notice.postponed(level, compactAt, plan.Auto.Forced) {
		return nil
	}
	if s.cfg.Compaction == CompactAsk {
		if s.turn.declined {
			return nil
		}
		if s.cfg.Asker == nil {
			// Headless: "ask" means never compact without a person.
			return nil
		}
		ok, err := s.cfg.Asker.AskCompaction(ctx, plan)
		if err != nil {
			return err
		}
		if !ok {
			s.turn.declined = true
			return nil
		}
	}
	_, err := s.compactNow(ctx, in, plan, "auto compaction")
	if err != nil && ctx.Err() == nil {
		// A failed automatic compaction is not fatal: the request still
		// fits until the window itself is reached.
		s.emit(Event{Kind: EventError, Err: err.Error()})
		return nil
	}
	return err
}

// NoticeFraction places the compaction notice: when the level reaches
// this share of the auto-compaction threshold, EventCompactionSoon says
// what the coming compaction would keep and drop, early enough to read it
// or answer "Not now" before it runs.
const NoticeFraction = 0.90

// PostponeStep is how far past the threshold (a share of it) the level
// must rise before a postponed automatic compaction runs after all: with
// a 63K threshold, "Not now" at 58K lets the context grow to about 70K.
const PostponeStep = 0.10

// noticeState is the compaction notice of the current crossing and the
// user's "Not now". It has its own lock: PostponeCompaction is called while
// a turn holds the session's.
type noticeState struct {
	mu    sync.Mutex
	shown bool // the notice of this crossing was decided (sent or not)
	// postpone is set by "Not now"; from is the level then.
	postpone bool
	from     int
}

// noticeSoon sends EventCompactionSoon once per crossing of the notice
// mark: when the level is at or over the mark and under the threshold, and
// the gate would let an automatic compaction run (the mode is auto, no
// breaker holds it, something is summable at the threshold, and some plan
// may run). The level falling under the mark again (a rebuild) re-arms
// the notice and ends a postponement. It decides once per crossing: when
// the gate says no at the mark, no notice follows for that crossing.
// Nothing in it changes the session or the next request.
func (s *Session) noticeSoon(level, compactAt int) {
	mark := int(float64(compactAt) * NoticeFraction)
	n := &s.notice
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
	if s.cfg.Compaction != CompactAuto || s.st.Breakers.AutoPaused() {
		return
	}
	if ok, _ := s.st.Breakers.Allow(s.cfg.now(), false); !ok {
		return
	}
	in := s.compactInput(false)
	if !compact.ShouldCompact(max(level, compactAt+1), compact.PinnedTokens(in, compact.Pins(in)), compactAt) {
		return
	}
	plan := compact.PlanAuto(in, s.forecast())
	if plan.Auto == nil || plan.Auto.Chosen < 0 {
		return
	}
	plan.Messages = cloneMessages(plan.Messages)
	plan.Tokens = append([]int(nil), plan.Tokens...)
	s.emit(Event{Kind: EventCompactionSoon, Notice: &CompactionNotice{Level: level, Mark: mark, Threshold: compactAt, Plan: plan}})
}

// postponed reports whether "Not now" holds back the automatic compaction
// that would run at level: until the level is PostponeStep of the
// threshold past where it was postponed (or past the threshold, whichever
// is higher). The ceiling (forced) always runs it; cycles and emergency
// recovery are not affected. Once the level is past the step the
// postponement is over: it skips one compaction, not every one.
func (n *noticeState) postponed(level, compactAt int, forced bool) bool {
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

// Postpone answers the compaction notice with "Not now": the
// next automatic compaction is skipped until the level has risen a further
// PostponeStep of the threshold past the threshold (or past the level
// now, when that is higher). The ceiling still forces it, and cycles and
// emergency recovery still run. A rebuild that brings the level under the
// notice mark ends the postponement, and the next crossing sends a new
// notice. It never waits for a running turn, and it is not stored: a
// reopened session compacts as usual.
func (h Compaction) Postpone() {
	s := h.s
	level, _ := s.ContextTokens()
	s.notice.mu.Lock()
	s.notice.postpone, s.notice.from = true, level+statusReserve
	s.notice.mu.Unlock()
}

// cloneMessages returns deep copies of msgs, for an event.
func cloneMessages(msgs []transcript.Message) []transcript.Message {
	out := make([]transcript.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m.Clone()
	}
	return out
}

// forecast is what the pay-off decision of automatic compaction knows
// about this session: its ceiling and how fast its context grows.
func (s *Session) forecast() compact.Forecast {
	compactAt, cycleAt := s.Thresholds()
	growth, _ := s.measured()
	return compact.Forecast{Ceiling: compact.Ceiling(s.Window(), compactAt, cycleAt), Growth: growth}
}

// measured returns the billed tokens the context grows by per request and
// the billed tokens per own token of messages, measured from the usage
// anchor up to the last request (see compact.Growth); zero when unknown.
func (s *Session) measured() (growth, ratio float64) {
	g := s.st.Breakers.Growth
	if !s.anchor.Valid() {
		return g.Last, g.LastRatio
	}
	billed, _, own := s.anchor.Parts()
	return g.PerRequest(billed, s.st.CycleRequests), g.Ratio(billed, own)
}

// idleMicroCompact runs at the start of a turn: after MicroIdle without a
// reply the provider's cache has expired anyway, so clearing stale tool
// results now costs no extra cache miss. Only the micro-compact layer runs.
func (s *Session) idleMicroCompact() error {
	if s.cfg.Compaction == CompactOff {
		return nil
	}
	// Decide from the log alone; gathering the planner's input (a copy of
	// the log, MEMORY.md) is only worth it after a real pause.
	last := time.Time{}
	for i := s.log.Len() - 1; i >= 0; i-- {
		if m := &s.log.At(i).Msg; m.Role == transcript.Assistant {
			last = m.Time
			break
		}
	}
	if last.IsZero() || s.cfg.now().Sub(last) < compact.MicroIdle {
		return nil
	}
	in := s.compactInput(false)
	pins := compact.MechanicalPins(compact.Pins(in))
	in.Force = true // the cache is cold: clear every stale result, not just enough
	out, rep := compact.Micro(in, pins)
	if len(rep.Changes) == 0 {
		return nil
	}
	_, err := s.rebuild(rewrite{Kind: RebuildCompaction, Reason: "idle micro-compact", Messages: out.Messages})
	return err
}

// tokensOf returns the count the log keeps for each message
// (transcript.Entry.Tokens): the one count the gauge, the compaction
// planner and its preview, and purge all use.
func (s *Session) tokensOf() []int {
	out := make([]int, s.log.Len())
	for i := range out {
		out[i] = s.log.At(i).Tokens
	}
	return out
}
