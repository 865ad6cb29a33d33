// Package compact decides when the context is too full and how to shrink
// it: the trigger threshold, the pins that must survive, a cascade of
// layers from cheapest to most expensive, its circuit breakers, and a dry
// run that previews every rewrite before it is applied.
package compact

// Threshold inputs (DESIGN §4).
const (
	SummaryReserve   = 20_000 // tokens kept free for the summary itself
	safetyBuffer     = 13_000 // headroom for metadata, schemas and estimator drift
	smallWindow      = 200_000
	unknownThreshold = 95_000 // threshold for a model whose window is unknown
	minFraction      = 0.40   // never trigger below this share of the window
	DefaultCycleAt   = 0.75   // default cycle-restart fraction of the window
	cycleLead        = 0.10   // compaction triggers at least this share of the window before a cycle
)

// Threshold returns the auto-compaction trigger in tokens for a context
// window. Windows under 200K take a further 2/3 haircut; a model whose
// window is unknown gets 95,000; and the result never falls below 40 % of
// the window, which the formula alone would do for small windows (32K gives
// a negative number). known reports whether the window came from a known
// model or an explicit override.
func Threshold(window int, known bool) int {
	if !known {
		return min(unknownThreshold, max(window, unknownThreshold))
	}
	t := window - SummaryReserve - safetyBuffer
	if window < smallWindow {
		t = t * 2 / 3
	}
	floor := int(float64(window) * minFraction)
	return max(t, floor)
}

// CycleThreshold returns the token level at which a cycle restarts, or 0
// when cycles are disabled (fraction <= 0).
func CycleThreshold(window int, fraction float64) int {
	if fraction <= 0 {
		return 0
	}
	return int(float64(window) * min(fraction, 1))
}

// Levels returns both thresholds of a window in tokens, ordered: automatic
// compaction triggers first and a cycle restarts only if compaction could
// not keep the context down. Threshold alone puts compaction at 96.7 % of a
// 1M window, after a 75 % cycle, so compaction would never run; Levels
// moves it to cycleLead (10 %) of the window below the cycle, never under
// minFraction. Only when the user puts the cycle at or below that floor
// does the cycle come first (cycleAt <= compactAt). cycleAt is 0 when
// cycles are off, and then compaction keeps Threshold.
func Levels(window int, known bool, cycleFraction float64) (compactAt, cycleAt int) {
	compactAt = Threshold(window, known)
	cycleAt = CycleThreshold(window, cycleFraction)
	if cycleAt > 0 {
		lead := cycleAt - int(float64(window)*cycleLead)
		floor := int(float64(window) * minFraction)
		compactAt = min(compactAt, max(lead, floor))
	}
	return compactAt, cycleAt
}

// prefixRoom is the share of the window the conversation keeps above the
// fixed prefix (system prompt and tool catalogue) before compaction may
// trigger.
const prefixRoom = 0.25

// AbovePrefix returns compactAt raised to the fixed prefix plus prefixRoom
// of the window when it is lower: in a small window the 40 % floor can sit
// under the prefix itself (an 8K window with a 3.8K prefix), and compaction
// would then run at every step with nothing left to shrink. The raised
// level stays under the cycle level when cycles are on and come later,
// and under 90 % of the window. A level already high enough, or one the
// user put after the cycle, is returned unchanged.
func AbovePrefix(compactAt, cycleAt, window, prefix int) int {
	floor := prefix + int(float64(window)*prefixRoom)
	if compactAt >= floor || (cycleAt > 0 && cycleAt <= compactAt) {
		return compactAt
	}
	ceiling := window * 9 / 10
	if cycleAt > 0 {
		ceiling = min(ceiling, cycleAt-1)
	}
	return max(compactAt, min(floor, ceiling))
}
