package record

import (
	"slices"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

// The user's first words stay pinned while later turns become stubs: the
// kept messages are numbered around the removed turns, not from their
// count, so a pinned old failure is not taken for a later one.
func TestTurnsSkipTheRemovedOnes(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	human := func(s string) transcript.Message { return transcript.UserText("", s, at) }
	reply := transcript.AssistantReply("ok", "", nil, at)
	// Turns 1 and 2 kept, 3 to 5 removed, 6 and 7 kept.
	msgs := []transcript.Message{human("one"), reply, human("two"), reply, human("six"), reply, human("seven")}
	if got, want := Turns(msgs, 3, 3, 4, 5), []int{1, 1, 2, 2, 6, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("Turns around 3, 4, 5 = %v, want %v", got, want)
	}
	// A later cycle: ten turns before it, turn 12 removed.
	if got, want := Turns(msgs[:5], 11, 12), []int{11, 11, 13, 13, 14}; !slices.Equal(got, want) {
		t.Errorf("Turns after 10 turns around 12 = %v, want %v", got, want)
	}
	if got, want := Turns(msgs[:3], 4), []int{5, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("Turns from base 4 = %v, want %v", got, want)
	}
}
