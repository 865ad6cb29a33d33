package compact

import (
	"fmt"
	"math"

	"github.com/tally-dev/tally/internal/text"
)

// Pay-off rules of automatic compaction (DESIGN §4). A compaction rewrites
// the history, so the provider bills the rewritten part of the next request
// at the miss price once; it pays for itself only when the tokens it frees,
// no longer re-sent as cache hits on every later request, outweigh that.
const (
	// targetFraction is the hysteresis of automatic compaction: it aims to
	// leave the level at or under the prefix plus this share of the room
	// between the prefix and the threshold (see [Target]), so it frees
	// enough to last instead of trimming to just under the threshold.
	targetFraction = 0.5
	// ThresholdMargin is the share of the threshold an automatic
	// compaction must leave free: a plan whose level after is above
	// (1 − ThresholdMargin) × threshold never runs automatically.
	ThresholdMargin = 0.10
	// ceilingFraction is the share of the window at which automatic
	// compaction stops waiting for a pay-off (see [Ceiling]).
	ceilingFraction = 0.90
	// DefaultHorizon is the expected number of remaining requests while
	// the growth of the context is unknown.
	DefaultHorizon = 50
	// MaxHorizon caps the expected number of remaining requests.
	MaxHorizon = 200
	// minGrowthRequests is the fewest requests the growth is measured
	// over before it is trusted.
	minGrowthRequests = 3
)

// Target returns the level automatic compaction aims for: the prefix (the
// system prompt and tools, which no compaction shrinks) plus
// [targetFraction] of the room between it and the threshold. A threshold
// of zero or less gives zero (no target).
func Target(threshold, prefix int) int {
	if threshold <= 0 {
		return 0
	}
	prefix = min(max(prefix, 0), threshold)
	return prefix + int(float64(threshold-prefix)*targetFraction)
}

// Limit returns the highest level an automatic compaction may leave:
// [ThresholdMargin] under the threshold.
func Limit(threshold int) int {
	return int(float64(max(threshold, 0)) * (1 - ThresholdMargin))
}

// Ceiling returns the level at which automatic compaction runs whether or
// not it pays off: [ceilingFraction] of the window, or the cycle threshold
// when cycles are on and it lies between the compaction threshold and
// that. It is never under the threshold; an unknown window (zero) gives
// the threshold, so compaction then never waits.
func Ceiling(window, threshold, cycleAt int) int {
	c := int(float64(max(window, 0)) * ceilingFraction)
	if cycleAt > threshold && cycleAt < c {
		c = cycleAt
	}
	return max(c, threshold)
}

// Horizon returns the expected number of remaining requests over which a
// compaction made now is weighed. It is the number of requests until the
// level, growing by growth tokens per request, reaches ceiling — by then
// the ceiling forces a compaction (or a new cycle) anyway, so a saving
// later than that is not this compaction's — at most [MaxHorizon], and
// [DefaultHorizon] (capped alike) while the growth is unknown (zero or
// less). At or over the ceiling it is 0.
//
// With a 128K window (threshold 63,333, ceiling 96,000 at the default
// cycle point) and 350 tokens per request, the horizon at the threshold is
// (96,000 − 63,333) / 350 ≈ 93 requests.
func Horizon(level, ceiling int, growth float64) float64 {
	if level >= ceiling {
		return 0
	}
	if growth <= 0 || math.IsNaN(growth) {
		return DefaultHorizon
	}
	return math.Min(MaxHorizon, float64(ceiling-level)/growth)
}

// MissHitRatio returns how many times a hit the provider bills a miss:
// missPrice / hitPrice when both are known (positive), otherwise
// [defaultMissHitRatio].
func MissHitRatio(hitPrice, missPrice float64) float64 {
	if hitPrice > 0 && missPrice > 0 {
		return missPrice / hitPrice
	}
	return defaultMissHitRatio
}

// Growth measures how fast the context grows and how the provider counts
// it: the provider's billed count of a request and the planner's own count
// of the same request at a base point (the first anchored request of a
// cycle, or the first after a rebuild), against a later request. Billed
// tokens per request give the growth; billed tokens per own token of what
// was appended give the ratio [Input.Ratio] converts with, which the
// request's prefix (system prompt and tool schemas, often counted quite
// differently) does not distort. A rebuild moves the base, since it
// shrinks the level without saying anything about either; until the new
// base has enough behind it, the figures measured before the move stand.
// The zero value knows nothing. Its fields are its state, so it persists
// as JSON.
type Growth struct {
	Level    int  `json:"level"`
	Own      int  `json:"own,omitempty"`
	Requests int  `json:"requests"`
	Set      bool `json:"set"`
	// Last and LastRatio are the growth per request and the ratio
	// measured before the base last moved; zero when unknown.
	Last      float64 `json:"last,omitempty"`
	LastRatio float64 `json:"last_ratio,omitempty"`
}

// minRatioTokens is the fewest own tokens appended since the base before
// the ratio measured over them is trusted.
const minRatioTokens = 2_000

// Mark sets the base point, if none is set: a request billed level tokens
// that the planner counted own, after requests requests.
func (g *Growth) Mark(level, own, requests int) {
	if g != nil && !g.Set {
		g.Level, g.Own, g.Requests, g.Set = level, own, requests, true
	}
}

// Rebase keeps the figures measured up to a request billed level tokens
// (own by the planner's count) after requests requests and drops the
// base, as before a rebuild: the next Mark sets a new one.
func (g *Growth) Rebase(level, own, requests int) {
	if g == nil {
		return
	}
	if r := g.PerRequest(level, requests); r > 0 {
		g.Last = r
	}
	if r := g.Ratio(level, own); r > 0 {
		g.LastRatio = r
	}
	g.Level, g.Own, g.Requests, g.Set = 0, 0, 0, false
}

// PerRequest returns the billed tokens added per request from the base to
// a request billed level tokens after requests requests, when at least
// [minGrowthRequests] requests lie between and the level grew, and
// otherwise the growth measured before the base last moved (zero when
// unknown).
func (g Growth) PerRequest(level, requests int) float64 {
	if n := requests - g.Requests; g.Set && n >= minGrowthRequests && level > g.Level {
		return float64(level-g.Level) / float64(n)
	}
	return g.Last
}

// Ratio returns the billed tokens per own token appended from the base to
// a request billed level tokens and counted own, when at least
// [minRatioTokens] own tokens were appended, and otherwise the ratio
// measured before the base last moved (zero when unknown).
func (g Growth) Ratio(level, own int) float64 {
	if d := own - g.Own; g.Set && d >= minRatioTokens && level > g.Level {
		return float64(level-g.Level) / float64(d)
	}
	return g.LastRatio
}

// Forecast is what the pay-off decision knows about the session.
type Forecast struct {
	// Ceiling is the level at which compaction no longer waits (see
	// [Ceiling]).
	Ceiling int
	// Growth is the average tokens added per request (see [Growth]); zero
	// or less when unknown.
	Growth float64
}

// Candidate is one plan weighed by the pay-off decision.
type Candidate struct {
	// Name names the plan by its deepest layer: "micro+prune", "summary"
	// or "memory".
	Name        string `json:"name"`
	TokensAfter int    `json:"tokens_after"`
	// OneOff is the one-time cost in hit-price units (see
	// [CacheCost.OneOff]).
	OneOff float64 `json:"one_off"`
	// Repeats is how many more times the level would climb back from
	// TokensAfter to the threshold within the horizon at the measured
	// growth, each time costing OneOff again.
	Repeats int `json:"repeats"`
	// Net is the forecast saving over the horizon in hit-price units:
	// the tokens saved on every request of the horizon less the one-off
	// cost for this compaction and each repeat. Positive means it pays.
	Net float64 `json:"net"`
	// Refused says why the plan may not run automatically, or "".
	Refused string `json:"refused,omitempty"`
}

// Decision says whether an automatic compaction runs now, and why.
type Decision struct {
	// Run is true when the chosen plan is to be applied now.
	Run bool `json:"run"`
	// Forced is true when the level reached the ceiling, so the best
	// allowed plan runs whether or not it pays off.
	Forced bool `json:"forced,omitempty"`
	// Reason is one sentence for people.
	Reason string `json:"reason"`
	// Horizon is the number of requests expected before the ceiling (see
	// [Horizon]) and Growth the tokens per request it was computed with.
	Horizon float64 `json:"horizon"`
	Growth  float64 `json:"growth,omitempty"`
	// Ceiling and Target are the levels of [Ceiling] and [Target].
	Ceiling int `json:"ceiling"`
	Target  int `json:"target"`
	// Limit is the highest level an automatic compaction may leave (see
	// [Limit]).
	Limit int `json:"limit"`
	// Chosen is the index in Candidates of the plan returned, or -1.
	Chosen     int         `json:"chosen"`
	Candidates []Candidate `json:"candidates"`
}

// PlanAuto plans an automatic compaction and decides whether it runs now.
// It plans with the hysteresis target ([Target]): the cheap layers keep
// going until the level is at or under it, and when they cannot get there
// the summary (or the memory file) runs instead of a small trim. When the
// cheap layers alone reach it, the deep plan (the summary after them) is
// weighed too. Each plan is charged the cache bust it causes and the
// summary request it needs (see [CacheCost.OneOff]) against the tokens it
// saves on each request of the [Horizon], and once more for every time the
// level would climb back to the threshold within it. The plan with the
// largest net saving runs when that saving is positive, or, once the level
// reaches the ceiling, whether or not it is; waiting is then no longer an
// option, so the plans are ranked over the requests a compaction to the
// target lasts before the ceiling ([Horizon] from the target). A plan that
// would leave the level above [Limit] never runs. The returned plan is the chosen one (the
// best one when none runs) with its Decision in Auto; in.Force is ignored.
func PlanAuto(in Input, f Forecast) Plan {
	in = normalized(in)
	in.Force, in.Deep = false, false
	in.Target = Target(in.Threshold, in.PrefixTokens)
	plans := []Plan{PlanCascade(in)}
	if !plans[0].cuts() {
		deep := in
		deep.Deep = true
		if p := PlanCascade(deep); p.cuts() {
			plans = append(plans, p)
		}
	}
	d := Decision{
		Growth: max(f.Growth, 0), Ceiling: max(f.Ceiling, in.Threshold),
		Target: in.Target, Limit: Limit(in.Threshold), Chosen: -1,
	}
	d.Horizon = Horizon(in.Level, d.Ceiling, d.Growth)
	d.Forced = in.Level >= d.Ceiling
	horizon := d.Horizon
	if d.Forced {
		// Waiting is no longer an option: rank the plans over the
		// requests a compaction to the target lasts.
		horizon = Horizon(d.Target, d.Ceiling, d.Growth)
	}
	best := -1
	for i, p := range plans {
		c := weigh(p, in.Threshold, horizon, d)
		d.Candidates = append(d.Candidates, c)
		if c.Refused == "" && (best < 0 || c.Net > d.Candidates[best].Net) {
			best = i
		}
	}
	if best < 0 {
		d.Reason = fmt.Sprintf("no plan leaves the level at or under %s tokens, %.0f %% under the threshold: %s",
			text.Thousands(d.Limit), 100*ThresholdMargin, d.Candidates[len(d.Candidates)-1].Refused)
		p := plans[len(plans)-1]
		p.Auto = &d
		return p
	}
	d.Chosen = best
	c := d.Candidates[best]
	p := plans[best]
	switch {
	case d.Forced:
		d.Run = true
		d.Reason = fmt.Sprintf("the level reached the ceiling of %s tokens, so %s runs whether or not it pays off", text.Thousands(d.Ceiling), c.Name)
	case c.Net > 0:
		d.Run = true
		d.Reason = fmt.Sprintf("%s pays back after %s, within the %s expected before the ceiling", c.Name, requests(p.Cache.BreakEven), requests(d.Horizon))
	default:
		d.Reason = fmt.Sprintf("waiting: %s would pay back only after %s, and about %s are expected before the ceiling of %s tokens",
			c.Name, requests(p.Cache.BreakEven), requests(d.Horizon), text.Thousands(d.Ceiling))
	}
	p.Auto = &d
	p.Cache.Horizon = d.Horizon
	return p
}

// cuts reports whether the plan replaces history with a summary or the
// memory file.
func (p Plan) cuts() bool { return p.NeedsSummary || p.SummarySource != "" }

// weigh forecasts one plan over horizon requests.
func weigh(p Plan, threshold int, horizon float64, d Decision) Candidate {
	c := Candidate{Name: LayerMicro + "+" + layerPrune, TokensAfter: p.TokensAfter, OneOff: p.Cache.OneOff}
	switch {
	case p.SummarySource == LayerMemory:
		c.Name = LayerMemory
	case p.NeedsSummary:
		c.Name = LayerSummary
	}
	saved := float64(max(p.TokensBefore-p.TokensAfter, 0))
	if room := threshold - p.TokensAfter; d.Growth > 0 && room > 0 {
		c.Repeats = int(horizon * d.Growth / float64(room))
	}
	c.Net = horizon*saved - c.OneOff*float64(1+c.Repeats)
	switch {
	case p.TokensAfter >= p.TokensBefore:
		c.Refused = "it frees nothing"
	case p.TokensAfter > d.Limit:
		c.Refused = fmt.Sprintf("%s would leave %s tokens", c.Name, text.Thousands(p.TokensAfter))
	}
	return c
}

// requests formats a number of requests for a sentence.
func requests(n float64) string {
	switch {
	case n < 0 || math.IsInf(n, 1):
		return "never"
	case n == 1:
		return "1 request"
	case n < 10:
		return fmt.Sprintf("%.1f requests", n)
	}
	return fmt.Sprintf("%s requests", text.Thousands(int(math.Round(n))))
}
