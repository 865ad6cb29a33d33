package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
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

// PostponeCompaction answers the compaction notice with "Not now": the
// next automatic compaction is skipped until the level has risen a further
// PostponeStep of the threshold past the threshold (or past the level
// now, when that is higher). The ceiling still forces it, and cycles and
// emergency recovery still run. A rebuild that brings the level under the
// notice mark ends the postponement, and the next crossing sends a new
// notice. It never waits for a running turn, and it is not stored: a
// reopened session compacts as usual.
func (s *Session) PostponeCompaction() {
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

// emergency recovers from a provider's "context length exceeded": a forced
// compaction, then hard truncation from the front if that is not enough.
// At most compact.MaxEmergencyPerTurn recoveries run per turn.
func (s *Session) emergency(ctx context.Context, cause error) error {
	if s.turn.emergencies >= compact.MaxEmergencyPerTurn {
		return fmt.Errorf("agent: the request is still too long for the model after %d emergency recoveries (%w); start a new cycle or session", s.turn.emergencies, cause)
	}
	s.turn.emergencies++
	s.turn.rejectedAt, _ = s.level()
	in := s.compactInput(true)
	res, err := s.compactNow(ctx, in, compact.PlanCascade(in), "emergency compaction")
	if err != nil && ctx.Err() != nil {
		return err
	}
	compacted := err == nil && res.Applied
	// The provider counts more than our estimate does: aim a quarter
	// below the level it rejected, or at the threshold if that is lower.
	level, _ := s.level()
	target := min(s.compactionThreshold(), s.turn.rejectedAt*3/4)
	if s.turn.rejectedAt == 0 {
		target = s.compactionThreshold()
	}
	if level+statusReserve <= target {
		return nil
	}
	// The level may be in the provider's units (anchored) and the log's
	// counts are ours: remove the excess scaled to our units.
	est := s.prefixTok + s.log.Tokens()
	ratio := 1.0
	if est > 0 && level > est {
		ratio = float64(level) / float64(est)
	}
	excess := level + statusReserve - target
	budget := s.log.Tokens() - int(float64(excess)/ratio) - 1
	kept, dropped := compact.Truncate(s.log.Messages(), s.tokensOf(), max(budget, 0))
	if dropped == 0 && compacted {
		return nil // the compaction shrank it; let the retry tell
	}
	if dropped == 0 {
		return fmt.Errorf("agent: the request is too long for the model, and after emergency recovery nothing more can be dropped (%w); start a new cycle or session", cause)
	}
	_, err = s.rebuild(rewrite{Kind: RebuildEmergency, Reason: "emergency truncation", Messages: kept})
	return err
}

// rollCycle closes the current cycle and opens the next one: the model
// writes a hand-off brief, the cycle is archived (its log stays in the
// store; the archive record holds the brief and stats), and the new cycle
// starts from the original system prompt, a [CYCLE STATE] seed, a one-line
// acknowledgement and the user's latest request.
func (s *Session) rollCycle(ctx context.Context, mode string) error {
	brief, err := s.handOffBrief(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		brief = "(no hand-off brief: the model could not write one — " + err.Error() + ". Rely on the checklist and re-read the files you need.)"
	}
	level, _ := s.level()
	now := s.cfg.now()
	arch := archiveRecord{Cycle: s.meta.Cycle, Started: s.st.CycleStarted, Ended: now, Brief: brief, Tokens: level, Requests: s.st.CycleRequests}
	if arch.Started.IsZero() {
		arch.Started = s.meta.Created
	}
	next := s.meta.Cycle + 1
	carried, blobs := s.handOver()
	seed := cycle.Messages(cycle.State{
		Mode: mode, Workspace: s.meta.Workspace, Cycle: next,
		Checklist: s.checklist.Items(), WorkingSet: s.st.WorkingSet.Paths, Brief: brief,
		Subagents: s.subs.cycleChildren(),
		UserWords: carried.Words, UserStubs: carried.Stubs, Record: carried.Record.Render(compact.RecordTokens),
	}, now)
	msgs := seed
	// Mid-turn (an automatic cycle) the user's latest request is the work
	// in progress and carries over. A cycle started between turns does not
	// copy it: it was answered, and repeating it would show the model an
	// answered request as open; the user's next message follows the seed.
	if mode == cycle.ModeAuto {
		if u, ok := s.lastUserText(); ok {
			msgs = append(msgs, u)
		}
	}
	// Turn numbers run on across cycles, so the record's "latest turn
	// wins" holds for what earlier cycles recorded too.
	turns := s.st.Carry.TurnBase
	for _, m := range s.log.Messages() {
		if m.IsPlainUserText() {
			turns++
		}
	}
	if len(msgs) > len(seed) {
		turns-- // the carried request starts the new log again
	}
	_, err = s.rebuild(rewrite{Kind: RebuildCycle, Reason: "cycle", Messages: msgs, Cycle: next, Summary: brief,
		Detail: fmt.Sprintf("cycle %d archived; cycle %d started", s.meta.Cycle, next),
		State: func(st *state) {
			st.Summary = ""
			st.Carry, st.Carried = compactCarry{TurnBase: max(turns, 0)}, carried
			st.Breakers.Reset()
			st.CycleStarted, st.CycleRequests = now, 0
		},
		Extra: func(tx *storage.Tx) error {
			for _, b := range blobs {
				if _, err := tx.PutBlob([]byte(b)); err != nil {
					return err
				}
			}
			a, _ := json.Marshal(arch)
			_, err := tx.AddRecord(storage.KindArchive, s.meta.ID, a)
			return err
		}})
	if err != nil {
		return fmt.Errorf("agent: could not save the new cycle (%w); the session continues in cycle %d", err, s.meta.Cycle)
	}
	return nil
}

// handOver is what the next cycle's seed carries of the user's words and
// the work so far: the words of the earlier cycles and of this one, newest
// verbatim within the user's-words budget and older ones as stub lines,
// and the work record of every cycle. It returns the texts the stubs'
// handles name, to be stored as blobs.
func (s *Session) handOver() (cycleCarry, []string) {
	msgs := s.log.Messages()
	budget := compact.UserWordsBudget(compact.Input{Threshold: s.compactionThreshold(), PrefixTokens: s.prefixTok, Window: s.Window()})
	// Earlier cycles' verbatim words come first, as messages, so one
	// budget rule decides over all of them.
	var all []transcript.Message
	for _, w := range s.st.Carried.Words {
		all = append(all, transcript.UserText("", w, time.Time{}))
	}
	all = append(all, msgs...)
	words, stubs := compact.UserWords(all, s.st.Carry.TurnBase-len(s.st.Carried.Words), budget)
	var blobs []string
	kept := map[string]bool{}
	for _, w := range words {
		kept[w] = true
	}
	for _, m := range all {
		if m.IsPlainUserText() && !kept[m.Body()] {
			blobs = append(blobs, m.Body())
		}
	}
	c := cycleCarry{Words: words}
	c.Stubs = append(append(append(c.Stubs, s.st.Carried.Stubs...), s.st.Carry.Earlier.UserStubs...), stubs...)
	if n := len(c.Stubs) - compact.MaxCarriedStubs; n > 0 {
		c.Stubs = c.Stubs[n:] // the oldest go first
	}
	c.Record = s.st.Carried.Record.Merge(compact.LogRecord(s.st.Carry.Record, msgs, s.st.Carry.TurnBase))
	return c, blobs
}

// lastUserText returns the newest message the human typed in this cycle.
func (s *Session) lastUserText() (transcript.Message, bool) {
	for i := s.log.Len() - 1; i >= 0; i-- {
		if m := s.log.At(i).Msg; m.IsPlainUserText() {
			return m, true
		}
	}
	return transcript.Message{}, false
}

// handOffBrief asks the model for the brief to its next self.
func (s *Session) handOffBrief(ctx context.Context) (string, error) {
	req := cycle.BriefRequest(s.cfg.ModelName, s.st.System, s.catalog, s.replayWire())
	resp, err := s.metered(ledger.KindBrief).Stream(ctx, req, llm.Callbacks{})
	if err != nil {
		return "", err
	}
	content, _ := redactText(resp.Content) // model-written, stored and sent like a reply
	brief := cycle.EnforceBrief(content)
	if brief == "" {
		return "", errors.New("the model returned an empty brief")
	}
	return brief, nil
}

// NewCycle closes the current cycle now and opens the next one, as the
// user asked.
func (s *Session) NewCycle(ctx context.Context) error {
	end, ok := s.beginWork()
	if !ok {
		return ErrBusy
	}
	defer end()
	if s.log.Len() == 0 {
		return errors.New("agent: this cycle is empty; there is nothing to archive yet")
	}
	return s.rollCycle(ctx, cycle.ModeManual)
}

// archiveRecord is the stored record of a closed cycle; its messages stay
// in the cycle's own log in the store.
type archiveRecord struct {
	Cycle    int       `json:"cycle"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Brief    string    `json:"brief"`
	Tokens   int       `json:"tokens"`
	Requests int       `json:"requests"`
}
