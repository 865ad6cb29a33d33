package compact

import (
	"math"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/record"
	"github.com/tally-dev/tally/engine/transcript"
)

// Input is everything the compaction decisions look at. It is read only:
// no function of this package modifies the slices it holds.
type Input struct {
	// Messages is the cycle's log, oldest first.
	Messages []transcript.Message
	// Tokens holds the token count of each message, framing included, as
	// the log cached it (transcript.Entry.Tokens). A missing or negative
	// entry takes the count stored with the message (transcript.TokensOf).
	Tokens []int
	// Wire optionally holds the cached wire form of each message exactly as
	// it was sent. When it has one entry per message, the cache-aligned
	// summary request replays it byte for byte; otherwise messages are
	// rendered afresh.
	Wire []chat.Message
	// PrefixTokens is the cost of the system prompt and the tool catalog.
	PrefixTokens int
	// Level is the current context size in tokens, from the usage anchor.
	// Zero means unknown: PrefixTokens plus the message tokens is used.
	Level int
	// Ratio is how many tokens the provider counts for one token of the
	// message counts in Tokens, as measured (see [Growth.Ratio]); zero
	// means unknown, and the ratio of Level to PrefixTokens plus the
	// message tokens stands in. The levels of a plan are in the units of
	// Level: removing n message tokens lowers it by n × Ratio.
	Ratio float64
	// Threshold is the auto-compaction trigger (see [Threshold]). Zero or
	// less means there is no target and every layer runs as with Force.
	Threshold int
	// Window is the model's context window in tokens; zero when unknown.
	Window int
	// WorkingSet lists the workspace-relative paths recently touched, most
	// recent last.
	WorkingSet []string
	// Now is the time of the decision; it is compared with message times
	// to find idle gaps.
	Now time.Time
	// Memory is the content of the workspace MEMORY.md, or "" when there
	// is none. The caller reads the file.
	Memory string
	// PreviousSummary is the summary already merged into the system prompt
	// by an earlier compaction, or "". The flattened summary request shows
	// it to the model so a second compaction keeps what the first one
	// learnt.
	PreviousSummary string
	// Force runs the layers even below the threshold: a manual /compact or
	// an emergency.
	Force bool
	// Target, when positive and under Threshold, is the goal of the
	// layers instead of the threshold: the hysteresis of automatic
	// compaction (see [Target] and [PlanAuto]). The cheap layers keep
	// going until the level is at or under it, the working-set pins are
	// trimmed to its room, and the summary runs when they cannot reach
	// it. The emergency forecast still aims at the threshold.
	Target int
	// Deep plans the summary (or the memory file) even when the cheap
	// layers could reach the goal: the deep candidate [PlanAuto] weighs
	// against the cheap one. The cheap layers then clear all they can
	// first, as they do whenever a summary follows them.
	Deep bool
	// HitPrice and MissPrice are the provider's prices per million input
	// tokens for cache hits and misses. Zero means unknown; the break-even
	// estimate then assumes misses cost [defaultMissHitRatio] times hits.
	HitPrice, MissPrice float64
	// Reminders is what [Apply] re-injects after the history was cut.
	Reminders ReminderInputs
	// ReminderBudget caps the tokens of the re-injected reminders; zero
	// means [defaultReminderBudget].
	ReminderBudget int
	// Record is the work record of what earlier compactions of this cycle
	// removed or shrank, zero at the start of a cycle. The agent sets it
	// to the last [Result.Record] it stored; [Apply] merges into it the
	// record of the messages this compaction removes or shrinks and shows
	// the whole in the section.
	Record record.Record
	// TurnBase is the number of human messages of this cycle that are no
	// longer in Messages (removed by earlier compactions), so the record,
	// the stubs and the dropped index number turns as the cycle does. The
	// agent sets it (the sum of the human messages earlier compactions
	// removed: count the droppedLines of role user with no Kind, or keep a
	// counter); zero at the start of a cycle.
	TurnBase int
	// RemovedTurns are the turn numbers, among TurnBase, of the human
	// messages earlier compactions of this cycle removed (see
	// record.Turns): the user's first words stay pinned while later ones
	// become stubs, so the kept ones are not numbered from TurnBase on.
	// Nil in states of an older Tally: then TurnBase alone numbers them.
	RemovedTurns []int
	// NoFacts leaves out what a compaction keeps by construction — the
	// user's words pinned beyond the newest, the work record, the stubs
	// and the dropped index — as compactions did before them. It exists
	// to measure what they cost; the app never sets it.
	NoFacts bool
	// Earlier is what earlier compactions of this cycle left in the
	// section's stubs and dropped index; the agent sets it to the last
	// [Result.Earlier] it stored, zero at the start of a cycle.
	Earlier Earlier

	// ratio converts the planner's own counts into the units of Level
	// (see normalized); zero means 1.
	ratio float64
}

// MessageTokens is transcript.MessageTokens, the engine's one per-message
// token formula, applied to m on its own: what a message this package
// writes (a placeholder, a reminder) costs on the wire.
func MessageTokens(m transcript.Message) int { return transcript.MessageTokens(m) }

// messageTokens returns one count per message of in, taking in.Tokens
// where it is present and otherwise the count the log stored with the
// message (transcript.TokensOf); nothing is counted again unless a message
// carries no count.
func messageTokens(in Input) []int {
	out := make([]int, len(in.Messages))
	for i, m := range in.Messages {
		if i < len(in.Tokens) && in.Tokens[i] >= 0 {
			out[i] = in.Tokens[i]
		} else {
			out[i] = transcript.TokensOf(m)
		}
	}
	return out
}

// level returns in.Level, or the estimate from the prefix and the message
// counts when it is unknown.
func level(in Input, toks []int) int {
	if in.Level > 0 {
		return in.Level
	}
	return max(in.PrefixTokens, 0) + sum(toks)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// Bounds of the ratio between the level and the planner's own count.
const (
	minRatio = 0.25
	maxRatio = 4
)

// normalized returns a copy of in whose Tokens has one entry per message and
// whose Level is known. Messages are copied so layers may replace entries.
//
// The level is usually the provider's billed count while the message
// tokens are the engine's estimates, and the two tokenizers differ. The
// copy keeps their ratio (in.Ratio when measured, else Level over
// PrefixTokens plus the message tokens, within [minRatio, maxRatio]) so
// that a layer removing n estimated tokens lowers the level by scaled(n),
// not by n: the level after a plan stays in the provider's units,
// comparable with the threshold. Normalizing again gives the same ratio.
func normalized(in Input) Input {
	toks := messageTokens(in)
	in.Level = level(in, toks)
	in.Tokens = toks
	in.Messages = append([]transcript.Message(nil), in.Messages...)
	in.ratio = 1
	switch own := max(in.PrefixTokens, 0) + sum(toks); {
	case in.Ratio > 0:
		in.ratio = min(max(in.Ratio, minRatio), maxRatio)
	case own > 0:
		in.ratio = min(max(float64(in.Level)/float64(own), minRatio), maxRatio)
	}
	return in
}

// scaled converts n tokens of the planner's own count into the units of
// in.Level (see normalized).
func (in Input) scaled(n int) int {
	if in.ratio == 0 {
		return n
	}
	return int(math.Round(float64(n) * in.ratio))
}

// unscaled converts n tokens in the units of in.Level into the planner's
// own count, the inverse of scaled.
func (in Input) unscaled(n int) int {
	if in.ratio == 0 {
		return n
	}
	return int(float64(n) / in.ratio)
}

// goal returns the level the layers work towards: in.Target when it is
// positive and under the threshold, otherwise the threshold.
func goal(in Input) int {
	if in.Target > 0 && in.Target < in.Threshold {
		return in.Target
	}
	return in.Threshold
}

// goalName names the goal in previews.
func goalName(in Input) string {
	if goal(in) != in.Threshold {
		return "target"
	}
	return "threshold"
}

// fits reports whether a level is at or under the goal (see goal). Without
// a threshold nothing fits, so every layer runs.
func fits(in Input, lvl int) bool {
	return in.Threshold > 0 && lvl <= goal(in)
}

// reminderBudget is in.ReminderBudget, or defaultReminderBudget when unset.
func reminderBudget(in Input) int {
	if in.ReminderBudget <= 0 {
		return defaultReminderBudget
	}
	return in.ReminderBudget
}

// keepGoing reports whether a layer should continue shrinking: always
// when forced or deep (a summary follows, so everything the cheap layers
// can clear is cleared first, as when they cannot reach the goal), else
// until the level fits.
func keepGoing(in Input, lvl int) bool {
	return in.Force || in.Deep || !fits(in, lvl)
}

// ShouldCompact reports whether automatic compaction should run. It looks
// at tokens only, and only at the summable portion: pinned messages stay
// after compaction, so they are taken out of both the level and the
// threshold. With threshold 967,000 and a level of 950,000 of which 40,000
// are pinned, the summable 910,000 is still under the docked 927,000, so
// compaction does not fire yet. Since the pinned tokens leave both sides,
// this is the same as level > threshold whenever something is summable;
// pinning more does not make it fire earlier, it only leaves less for
// compaction to remove. Negative inputs, a missing threshold, or a history
// with nothing summable never trigger.
func ShouldCompact(level, pinned, threshold int) bool {
	if level <= 0 || threshold <= 0 || pinned < 0 {
		return false
	}
	summable := level - pinned
	if summable <= 0 {
		return false
	}
	return summable > threshold-pinned
}
