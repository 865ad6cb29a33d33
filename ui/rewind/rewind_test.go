package rewind

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/rewind"
)

// A row finds its turn by the time and hash of its message, which no
// rewrite of the log changes, and else by its index in the log.
func TestTurnOfRow(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	turns := []rewind.Turn{{N: 1, LogIndex: -1, Time: t0, SHA: "abc"}, {N: 2, LogIndex: 3, Time: t0.Add(time.Minute), SHA: "def"}}
	for _, c := range []struct {
		row  Row
		want int
		ok   bool
	}{
		{Row{Sent: t0, Sha: "abc123", LogIndex: -1}, 1, true},
		{Row{Sent: t0.Add(time.Hour), Sha: "zzz", LogIndex: 3}, 2, true},
		{Row{LogIndex: -1}, 0, false},
	} {
		if got, ok := TurnOf(turns, c.row); got != c.want || ok != c.ok {
			t.Errorf("%+v: turn %d, %v; want %d, %v", c.row, got, ok, c.want, c.ok)
		}
	}
}

// /rewind without a number goes to the last turn; a number the session
// has not is said with the range it has.
func TestRewindTarget(t *testing.T) {
	turns := []rewind.Turn{{N: 3}, {N: 4}}
	n := 0
	if err := rewindTarget(turns, &n); err != nil || n != 4 {
		t.Errorf("the last turn: %d, %v", n, err)
	}
	n = 9
	if err := rewindTarget(turns, &n); err == nil || !strings.Contains(err.Error(), "numbered 3 to 4") {
		t.Errorf("turn 9: %v", err)
	}
	if err := rewindTarget(nil, &n); err == nil || !strings.Contains(err.Error(), "no turn yet") {
		t.Errorf("no turns: %v", err)
	}
}
