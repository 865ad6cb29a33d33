package compact

import (
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
)

// The user's words (issue 19, item 1).
const (
	// reasonUserWords pins a human message kept verbatim within
	// [UserWordsBudget].
	reasonUserWords = "user-words"
	// userWordsFloor is the smallest budget for the user's words.
	userWordsFloor = 8_000
	// userWordsShare is the share of the goal given to the user's words
	// when it is larger than userWordsFloor.
	userWordsShare = 0.10
	// userWordsMaxShare caps the budget at this share of the goal's room
	// for messages (the goal less the prefix), so that on a small window
	// the user's words and the working-set pins ([maxPinnedShare]) still
	// leave compaction something to remove.
	userWordsMaxShare = 0.25
)

// UserWordsBudget is how many tokens of human messages (their Body, the
// <turn_meta> block not counted) survive a compaction verbatim: the larger
// of userWordsShare of the goal and userWordsFloor, but no more than
// userWordsMaxShare of the goal's room for messages when a threshold is
// set. Engine-made user-role messages (seeds, reminders, status) are not
// the user's words and do not count.
func UserWordsBudget(in Input) int {
	b := max(int(float64(goal(in))*userWordsShare), userWordsFloor)
	if in.Threshold > 0 {
		room := max(goal(in)-max(in.PrefixTokens, 0), 0)
		b = min(b, int(float64(room)*userWordsMaxShare))
	}
	return max(b, 0)
}

// userWords splits the human messages of msgs into those kept verbatim
// and those past the budget: newest first, a message is kept while the
// kept tokens stay within budget, and the first that does not fit and
// every older one are past it. The newest human message is always kept
// (it is also pinned as [reasonUserText]). Both lists are ascending.
func userWords(msgs []transcript.Message, budget int) (kept, past []int) {
	used := 0
	full := false
	for i := len(msgs) - 1; i >= 0; i-- {
		if !msgs[i].IsPlainUserText() {
			continue
		}
		n := tokens.Count(msgs[i].Body())
		if !full && (len(kept) == 0 || used+n <= budget) {
			kept = append(kept, i)
			used += n
			continue
		}
		full = true
		past = append(past, i)
	}
	reverse(kept)
	reverse(past)
	return kept, past
}

func reverse(xs []int) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// UserWords applies the rule of [UserWordsBudget] to msgs, the log of a
// cycle that follows turnBase human messages: the verbatim texts (Body) of
// the human messages that fit budget tokens, oldest first, and one stub
// line for each older one (see [StubLine]), oldest first. The cycle
// hand-off uses it to carry the user's words into the next cycle's seed.
func UserWords(msgs []transcript.Message, turnBase, budget int) (verbatim, stubs []string) {
	kept, past := userWords(msgs, budget)
	turns := turnsOf(msgs, turnBase, nil)
	for _, i := range kept {
		verbatim = append(verbatim, msgs[i].Body())
	}
	for _, i := range past {
		stubs = append(stubs, StubLine(msgs[i], turns[i]))
	}
	return verbatim, stubs
}
