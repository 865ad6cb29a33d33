package rewrite

import (
	"fmt"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/internal/text"
)

// KeepAuto as Options.KeepUnder keeps the context under the price-aware
// level (see compact.Budget).
const KeepAuto = -1

// KeepOption is one choice of "keep the context under" with its forecast.
type KeepOption struct {
	// KeepUnder is the Options.KeepUnder value: KeepAuto, 0 for the
	// window's default, or a level in tokens.
	KeepUnder int
	// Level is the level in tokens the context is kept under with it for
	// this session now: the window's default caps every choice.
	Level int
	// Cost is the forecast input cost of the session's expected requests
	// with it (see compact.ForecastCost).
	Cost compact.BudgetCost
}

// KeepChoices are the fixed levels offered besides Auto and the window's
// default.
var KeepChoices = []int{64_000, 128_000, 256_000, 512_000}

// budgetState is what the last commit published for the price-aware
// level: its inputs and the level itself, computed once there rather than
// on every read of the thresholds.
type budgetState struct {
	in   compact.BudgetInput
	auto int                 // compact.Budget(at)
	at   compact.BudgetInput // what auto was computed from
	// stale: a rewrite lowered the level since auto was computed, whose
	// growth was not measured yet; auto is computed again once it is.
	stale bool
}

// defaultLevels returns the window's own thresholds, without the budget,
// with compaction kept above the fixed prefix (compact.AbovePrefix).
func (r *Session) defaultLevels() (compactAt, cycleAt int) {
	w, known := r.host.Window()
	at := r.opt.CycleAt
	if at == 0 {
		at = compact.DefaultCycleAt
	}
	compactAt, cycleAt = compact.Levels(w, known, at)
	return compact.AbovePrefix(compactAt, cycleAt, w, r.host.PrefixTokens()), cycleAt
}

// Thresholds returns the token levels at which auto-compaction triggers
// and at which a cycle restarts (0 when cycles are off). The compaction
// level follows Options.KeepUnder, never above the window's own. It never
// waits for a running turn.
func (r *Session) Thresholds() (compactAt, cycleAt int) {
	compactAt, cycleAt = r.defaultLevels()
	switch keep := r.opt.KeepUnder; {
	case keep > 0:
		compactAt = min(keep, compactAt)
	case keep == KeepAuto:
		if b := r.budget.Load(); b != nil && b.auto > 0 {
			compactAt = min(b.auto, compactAt)
		}
	}
	return compactAt, cycleAt
}

// Publish stores what the price-aware level is computed from, for
// Thresholds and KeepForecast, which never wait for a running turn. The
// conversation calls it after every commit. The session is expected to go
// on for as many requests as it has made, between compact.DefaultHorizon
// and compact.MaxHorizon; a compaction is expected to leave the prefix and
// compact.SummaryReserve.
func (r *Session) Publish() {
	compactAt, _ := r.defaultLevels()
	level, _ := r.host.Level()
	growth, _ := r.Measured()
	w, _ := r.host.Window()
	m := r.host.Model()
	in := compact.BudgetInput{
		Window: w, Threshold: compactAt,
		HitPrice: m.HitPrice, MissPrice: m.MissPrice,
		Level: level, Base: r.host.PrefixTokens() + compact.SummaryReserve, Growth: growth,
		Requests: float64(min(max(r.host.Requests(), compact.DefaultHorizon), compact.MaxHorizon)),
	}
	b := &budgetState{in: in}
	if r.opt.KeepUnder == KeepAuto {
		// The level matters once the context reaches it, when the session
		// has made about as many requests as it takes to get there: it is
		// weighed over the longest horizon, not the requests made so far,
		// so it does not drift as the session ages.
		// A growth measured over fewer than levelRequests requests since
		// the session began or the last rewrite is not trusted with it.
		long := in
		long.Requests = compact.MaxHorizon
		if r.growthSpan() < levelRequests {
			long.Growth = 0
		}
		b.auto, b.at = compact.Budget(long), long
		if prev := r.budget.Load(); prev != nil {
			if keep, stale := budgetHolds(prev, long); keep {
				b.auto, b.at, b.stale = prev.auto, prev.at, stale // hysteresis
			}
		}
	}
	r.budget.Store(b)
}

// Hysteresis of the price-aware level: rewriteDrop is the share of the
// level a rewrite removes at least (a smaller fall is the provider's count
// correcting the estimate); levelRequests is the fewest requests the
// growth must be measured over, since the session began or the last
// rewrite, before the level is computed from it.
const (
	rewriteDrop   = 0.10
	levelRequests = 20
)

// growthSpan is the number of requests the growth is measured over now:
// since the base the last rewrite (or the session's start) set.
func (r *Session) growthSpan() int {
	st := r.host.State()
	if g := st.Breakers.Growth; g.Set {
		return st.CycleRequests - g.Requests
	}
	return 0
}

// budgetHolds reports whether the price-aware level of prev holds at now
// and whether it is stale (a rewrite happened whose growth is not
// measured yet). The level is computed at two moments only: when the
// growth is first measured, and once it is measured again after a rewrite
// (the level fell by rewriteDrop or more, as a compaction, cycle, purge or
// rewind leaves it) — and afresh when the window, threshold or prices
// changed (another model). While the context only grows it holds, however
// the measured growth wanders, since it decides when the next compaction
// runs.
func budgetHolds(prev *budgetState, now compact.BudgetInput) (keep, stale bool) {
	at := prev.at
	if now.Window != at.Window || now.Threshold != at.Threshold || now.HitPrice != at.HitPrice || now.MissPrice != at.MissPrice {
		return false, false
	}
	stale = prev.stale || float64(now.Level) < float64(prev.in.Level)*(1-rewriteDrop)
	switch {
	case now.Growth <= 0:
		return prev.auto > 0, stale // nothing new is known: a level, once there is one, holds
	case at.Growth <= 0 || stale:
		return false, false // measured for the first time, or again after a rewrite
	}
	return true, false
}

// KeepForecast returns the choices of "keep the context under" for this
// session — Auto, the window's default and the KeepChoices under it — each
// with the level it keeps and the forecast input cost of the requests
// expected, from what the last commit published. The growth is zero (and
// every forecast flat) until it has been measured. It never waits for a
// running turn.
func (r *Session) KeepForecast() []KeepOption {
	compactAt, _ := r.defaultLevels()
	w, _ := r.host.Window()
	m := r.host.Model()
	in := compact.BudgetInput{Window: w, Threshold: compactAt, HitPrice: m.HitPrice, MissPrice: m.MissPrice}
	auto := -1
	if b := r.budget.Load(); b != nil {
		in = b.in
		if b.auto > 0 {
			auto = min(b.auto, compactAt) // the level in force, as Thresholds gives it
		}
	}
	opt := func(keep int) KeepOption {
		l := compactAt
		if keep == KeepAuto {
			l = auto
			if l < 0 {
				l = max(compact.Budget(in), 0)
			}
		} else if keep > 0 {
			l = min(keep, compactAt)
		}
		return KeepOption{KeepUnder: keep, Level: l, Cost: compact.ForecastCost(in, l)}
	}
	out := []KeepOption{opt(KeepAuto), opt(0)}
	for _, k := range KeepChoices {
		if k < compactAt {
			out = append(out, opt(k))
		}
	}
	return out
}

// forecast is what the pay-off decision of automatic compaction knows
// about this session: its ceiling and how fast its context grows.
func (r *Session) forecast() compact.Forecast {
	compactAt, cycleAt := r.Thresholds()
	growth, _ := r.Measured()
	w, _ := r.host.Window()
	return compact.Forecast{Ceiling: compact.Ceiling(w, compactAt, cycleAt), Growth: growth}
}

// Measured returns the billed tokens the context grows by per request and
// the billed tokens per own token of messages, measured from the usage
// anchor up to the last request (see compact.Growth); zero when unknown.

func (r *Session) Measured() (growth, ratio float64) {
	st := r.host.State()
	g := st.Breakers.Growth
	a := r.host.Anchor()
	if !a.Valid() {
		return g.Last, g.LastRatio
	}
	billed, _, own := a.Parts()
	return g.PerRequest(billed, st.CycleRequests), g.Ratio(billed, own)
}

// KeepReason says, for the gauge, why automatic compaction triggers where
// it does when that is under the window's own threshold: the level the
// user chose, or the price-aware level ("keeps the context under 52,046
// tokens: the cheapest level at this model's prices"); "" when the
// window's threshold holds. It never waits for a running turn.
func (r *Session) KeepReason() string {
	compactAt, _ := r.Thresholds()
	own, _ := r.defaultLevels()
	if compactAt <= 0 || compactAt >= own {
		return ""
	}
	why := "the level you chose"
	if r.opt.KeepUnder == KeepAuto {
		why = "the cheapest level at this model's prices"
	}
	return fmt.Sprintf("keeps the context under %s tokens: %s", text.Thousands(compactAt), why)
}
