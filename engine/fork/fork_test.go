package fork

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/storage"
)

// TestSpanRefusesTurnsWhosePromptIsGone: only a turn whose message is in
// the current cycle's log can be forked, its end is the next turn's
// message, and every refusal is one sentence naming the turns that can be.
func TestSpanRefusesTurnsWhosePromptIsGone(t *testing.T) {
	parent := storage.Session{ID: "p", Cycle: 2}
	turns := []rewind.Turn{
		{N: 1, Cycle: 1, LogIndex: -1},                   // an earlier cycle
		{N: 2, Cycle: 2, LogIndex: -1},                   // taken out by a compaction
		{N: 3, Cycle: 2, LogIndex: 4},                    // kept (pinned)
		{N: 4, Cycle: 2, LogIndex: -1},                   // taken out: turn 3's end is gone
		{N: 5, Cycle: 2, LogIndex: 9},                    //
		{N: 6, Cycle: 2, LogIndex: -1, Superseded: true}, // rewound
		{N: 7, Cycle: 2, LogIndex: 14},
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "turn 1 belongs to cycle 1 of session p, whose prompt is no longer stored, so only turns 3 to 7 of the current cycle 2 can be forked"},
		{2, "turn 2 of session p lies before a compaction that took it out of the conversation, so only turns 3 to 7 can be forked"},
		{3, "where turn 3 of session p ends is no longer in the conversation (a compaction took out turn 4), so fork from turn 5 or later"},
		{6, "turn 6 of session p was taken out of the conversation by a rewind"},
		{8, "session p has no turn 8; its turns are 1 to 7"},
	} {
		if _, _, _, err := span(parent, turns, c.n, 20); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("turn %d: %v; want %q", c.n, err, c.want)
		}
	}
	tn, end, next, err := span(parent, turns, 5, 20)
	if err != nil || tn.N != 5 || end != 14 || next == nil || next.N != 7 {
		t.Errorf("turn 5: %v %d %v %v; want it to end at turn 7's message, 14", tn.N, end, next, err)
	}
	tn, end, next, err = span(parent, turns, 0, 20)
	if err != nil || tn.N != 7 || end != 20 || next != nil {
		t.Errorf("the last turn: %v %d %v %v; want 7 ending at the log's end", tn.N, end, next, err)
	}
	if _, _, _, err := span(parent, nil, 0, 0); err == nil || !strings.Contains(err.Error(), "has no turn yet") {
		t.Errorf("no turns: %v", err)
	}
}
