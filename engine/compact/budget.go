package compact

import "math"

// The context budget: the level the context is kept under, chosen by price
// (Settings → "Keep the context under"). Every request pays the hit price
// for its whole context, so a large context costs on every request, while
// a compaction costs once: the rebuilt context billed at the miss price and
// the summary request. [Budget] weighs the two over the requests expected
// for the session; [ForecastCost] prices one choice.
const (
	// maxBudgetFloor caps the lowest level [Budget] may choose: a window's
	// budget floor is [minFraction] of it, at most this. A 1M window may
	// so go down to the level a 128K window would choose (its floor is
	// 32K too), so the same task costs about the same in either. Below it
	// a compaction, which keeps the prefix, the user's words, the work
	// record and the recent steps (about 17K tokens in the long session
	// of the cost tests), would leave too little room to work in before
	// the next.
	maxBudgetFloor = 32_000
	// budgetTolerance is the share of the cheapest forecast within which
	// [Budget] prefers the largest level: fewer compactions for nearly
	// the same price.
	budgetTolerance = 0.01
	// budgetSteps is the number of levels [Budget] weighs between the
	// floor and the threshold.
	budgetSteps = 128
)

// BudgetInput is what the price-aware level is computed from. Token counts
// are in the provider's count.
type BudgetInput struct {
	// Window is the context window; Threshold the level at which
	// compaction triggers by default for it (see [Levels]).
	Window, Threshold int
	// HitPrice and MissPrice are the input prices per million tokens;
	// zero means unknown (a miss then costs [defaultMissHitRatio] hits).
	HitPrice, MissPrice float64
	// Level is the level now.
	Level int
	// Base is the level a compaction leaves: the prefix, the summary and
	// what is pinned; zero or less means [SummaryReserve].
	Base int
	// Growth is the tokens added per request; zero or less when unknown.
	Growth float64
	// Requests is the number of requests expected from now on; zero or
	// less means [DefaultHorizon].
	Requests float64
}

// BudgetCost is the forecast input cost of keeping the context under one
// level for the requests expected.
type BudgetCost struct {
	// KeepUnder is the level weighed.
	KeepUnder int `json:"keep_under"`
	// Cost is the input cost in hit-price units: a cached token counts 1,
	// an uncached one the miss:hit ratio.
	Cost float64 `json:"cost"`
	// Compactions is how many compactions it takes.
	Compactions int `json:"compactions"`
	// Requests is the number of requests forecast.
	Requests int `json:"requests"`
}

// Dollars prices the cost at hitPrice per million cached tokens; zero when
// the price is unknown.
func (c BudgetCost) Dollars(hitPrice float64) float64 {
	return c.Cost * max(hitPrice, 0) / perMillion
}

// BudgetFloor returns the lowest level [Budget] may choose for a window
// whose default compaction level is threshold: [minFraction] of the
// window, at most [maxBudgetFloor], never above threshold.
func BudgetFloor(window, threshold int) int {
	return min(int(float64(max(window, 0))*minFraction), maxBudgetFloor, max(threshold, 0))
}

// ForecastCost forecasts the input cost of keeping the context under
// keepUnder tokens for the requests of in. Each request sends the whole
// context, the part added since the last one at the miss price and the
// rest at the hit price; when the level reaches keepUnder a compaction
// brings it back to the base, at a one-time cost: the rebuilt context
// billed at the miss price once, and the summary request (a replay at the
// hit price where the window allows one, see [CacheAligned]; otherwise
// the history flattened and sent at the miss price). A keepUnder of zero
// or less never compacts.
func ForecastCost(in BudgetInput, keepUnder int) BudgetCost {
	r := MissHitRatio(in.HitPrice, in.MissPrice)
	g := max(in.Growth, 0)
	if math.IsNaN(g) {
		g = 0
	}
	n := int(math.Round(in.Requests))
	if in.Requests <= 0 || math.IsNaN(in.Requests) {
		n = DefaultHorizon
	}
	base := float64(in.Base)
	if in.Base <= 0 {
		base = SummaryReserve
	}
	if keepUnder > 0 {
		base = min(base, float64(keepUnder)/2)
	}
	out := BudgetCost{KeepUnder: keepUnder, Requests: n}
	level := float64(max(in.Level, 0))
	for range n {
		if keepUnder > 0 && level >= float64(keepUnder) && level > base {
			out.Cost += rebuildCost(in.Window, level, base, r)
			out.Compactions++
			level = base
		}
		out.Cost += level + g*(r-1)
		level += g
	}
	return out
}

// rebuildCost is the one-time cost in hit-price units of a compaction
// from level to base at a miss:hit ratio of r.
func rebuildCost(window int, level, base, r float64) float64 {
	cost := base * max(r-1, 0)
	if window >= CacheAlignedMinWindow && level+instructionReserve <= cacheAlignedShare*float64(window) {
		return cost + level + instructionReserve*max(r-1, 0)
	}
	return cost + (level-base+instructionReserve)*r
}

// Budget returns the level the context should be kept under to spend the
// least on input over the requests of in: the level among [budgetSteps]
// between [BudgetFloor] and the threshold whose [ForecastCost] from the
// base (or from the level now, when lower) is lowest, preferring the
// largest within [budgetTolerance] of it. While
// the growth is unknown, or when the threshold is unknown (zero or less),
// it returns the threshold.
//
// Roughly, over a long session a level L costs (base + L) / 2 per request
// in hit-price units, plus growth / (L − base) compactions per request at
// base × (ratio − 1) plus the summary request each: the best level rises
// with the square root of the growth and of the miss:hit ratio. A short
// remaining session compacts later, or not at all.
func Budget(in BudgetInput) int {
	t := in.Threshold
	if t <= 0 || in.Growth <= 0 || math.IsNaN(in.Growth) {
		return max(t, 0)
	}
	steady := steadyInput(in)
	floor := BudgetFloor(in.Window, t)
	step := max((t-floor)/budgetSteps, 1)
	var levels []int
	var costs []float64
	best := math.Inf(1)
	for l := floor; ; l += step {
		l = min(l, t)
		c := ForecastCost(steady, l).Cost
		levels, costs = append(levels, l), append(costs, c)
		best = math.Min(best, c)
		if l == t {
			break
		}
	}
	for i := len(levels) - 1; i >= 0; i-- {
		if costs[i] <= best*(1+budgetTolerance) {
			return levels[i]
		}
	}
	return t
}

// steadyInput is in weighed from the level a compaction leaves, not from
// the level now, so a choice holds for the whole of a cycle between
// compactions instead of moving as the context fills.
func steadyInput(in BudgetInput) BudgetInput {
	if in.Base > 0 {
		in.Level = min(in.Level, in.Base)
	} else {
		in.Level = min(in.Level, SummaryReserve)
	}
	return in
}

// LevelCost is the forecast input cost, in hit-price units, of keeping
// the context under level for the requests of in, weighed as [Budget]
// weighs every level: so a level in force and the one Budget would pick
// now can be compared by what they cost rather than by how far apart
// they are.
func LevelCost(in BudgetInput, level int) float64 {
	return ForecastCost(steadyInput(in), level).Cost
}
