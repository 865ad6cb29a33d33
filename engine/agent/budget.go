package agent

import (
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/tokens"
)

// KeepAuto as Config.KeepUnder keeps the context under the price-aware
// level (see compact.Budget).
const KeepAuto = -1

// KeepOption is one choice of "keep the context under" with its forecast.
type KeepOption struct {
	// KeepUnder is the Config.KeepUnder value: KeepAuto, 0 for the
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

// defaultLevels returns the window's own thresholds, without the budget.
func (s *Session) defaultLevels() (compactAt, cycleAt int) {
	w := s.Window()
	_, known := tokens.Window(s.model().ModelName)
	known = known || s.model().ContextWindow > 0
	at := s.cfg.CycleAt
	if at == 0 {
		at = compact.DefaultCycleAt
	}
	return compact.Levels(w, known, at)
}

// keepLevel is the level the context is kept under for the setting keep
// when the window's default is compactAt: never above that default.
func (s *Session) keepLevel(keep, compactAt int) int {
	switch {
	case keep > 0:
		return min(keep, compactAt)
	case keep == KeepAuto:
		if b := s.budget.Load(); b != nil && b.auto > 0 {
			return min(b.auto, compactAt)
		}
	}
	return compactAt
}

// budgetState is what the last commit published for the price-aware
// level: its inputs and the level itself, computed once there rather than
// on every read of the thresholds.
type budgetState struct {
	in   compact.BudgetInput
	auto int // compact.Budget(in)
}

// publishBudget stores what the price-aware level is computed from, for
// Thresholds and KeepForecast, which never wait for a running turn. It
// runs with the session lock held, after every commit. The session is
// expected to go on for as many requests as it has made, between
// compact.DefaultHorizon and compact.MaxHorizon; a compaction is expected
// to leave the prefix and compact.SummaryReserve.
func (s *Session) publishBudget() {
	compactAt, _ := s.defaultLevels()
	level, _ := s.level()
	growth, _ := s.measured()
	in := compact.BudgetInput{
		Window: s.Window(), Threshold: compactAt,
		HitPrice: s.model().HitPrice, MissPrice: s.model().MissPrice,
		Level: level, Base: s.prefixTok + compact.SummaryReserve, Growth: growth,
		Requests: float64(min(max(s.st.Requests, compact.DefaultHorizon), compact.MaxHorizon)),
	}
	b := &budgetState{in: in}
	if s.cfg.KeepUnder == KeepAuto {
		b.auto = compact.Budget(in)
	}
	s.budget.Store(b)
}

// KeepForecast returns the choices of "keep the context under" for this
// session — Auto, the window's default and the KeepChoices under it — each
// with the level it keeps and the forecast input cost of the requests
// expected, from what the last commit published. The growth is zero (and
// every forecast flat) until it has been measured.
func (h Compaction) KeepForecast() []KeepOption {
	s := h.s
	compactAt, _ := s.defaultLevels()
	in := compact.BudgetInput{Window: s.Window(), Threshold: compactAt, HitPrice: s.model().HitPrice, MissPrice: s.model().MissPrice}
	if b := s.budget.Load(); b != nil {
		in = b.in
	}
	opt := func(keep int) KeepOption {
		l := compactAt
		if keep == KeepAuto {
			l = max(compact.Budget(in), 0)
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
