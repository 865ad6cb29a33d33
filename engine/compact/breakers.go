package compact

import (
	"fmt"
	"time"
)

// Circuit-breaker limits (DESIGN §4).
const (
	// FailureLimit is the number of consecutive failed compactions that
	// opens the failure breaker.
	FailureLimit = 3
	// FailureCooldown is how long the open breaker waits before it lets
	// one probe compaction through.
	FailureCooldown = 5 * time.Minute
	// RefillRounds is the number of tool rounds after a compaction within
	// which reaching the threshold again counts as a rapid refill.
	RefillRounds = 3
	// RefillLimit is the number of rapid refills in a row that pauses
	// automatic compaction for the rest of the turn.
	RefillLimit = 3
)

// RefillMessage explains a rapid-refill pause to the model and the person.
const RefillMessage = "Automatic compaction is paused for this turn: the context filled up again within a few tool rounds of compacting, " +
	"3 times in a row, so some tool output is too large for the window. Read large files in slices (read_file with offset and limit), " +
	"narrow grep patterns, or start a new cycle or session."

// Breakers holds both circuit breakers of automatic compaction. The failure
// breaker stops retrying a compaction that keeps failing; the rapid-refill
// breaker stops compacting when each compaction is undone within a few tool
// rounds. The zero value is closed and ready; the exported fields are its
// state, so it persists as JSON. It is not safe for concurrent use, and every
// method tolerates a nil receiver.
type Breakers struct {
	// Failures counts consecutive failed compactions.
	Failures int `json:"failures"`
	// OpenedAt is when the failure breaker last opened or a probe failed.
	OpenedAt time.Time `json:"opened_at,omitzero"`
	// Armed is true after a compaction until the level next reaches the
	// threshold; Rounds counts the tool rounds in between.
	Armed  bool `json:"armed"`
	Rounds int  `json:"rounds"`
	// Refills counts rapid refills in a row.
	Refills int `json:"refills"`
	// Paused is true when automatic compaction is paused for the turn.
	Paused bool `json:"paused"`
}

// Failed records a failed compaction at now. The failure-th failure in a row
// opens the breaker, and a failure while open (a failed probe) restarts the
// cooldown.
func (b *Breakers) Failed(now time.Time) {
	if b == nil {
		return
	}
	b.Failures++
	if b.Failures >= FailureLimit {
		b.OpenedAt = now
	}
}

// Succeeded closes the failure breaker.
func (b *Breakers) Succeeded() {
	if b == nil {
		return
	}
	b.Failures, b.OpenedAt = 0, time.Time{}
}

// Open reports whether the failure breaker is open (whether or not its
// cooldown has passed).
func (b *Breakers) Open() bool {
	return b != nil && b.Failures >= FailureLimit
}

// Allow reports whether a compaction may run at now, and if not, why. A
// manual compaction always may. An automatic one may not while the
// rapid-refill pause holds, nor while the failure breaker is open and its
// cooldown has not passed; after the cooldown one probe is allowed, and
// the reason says so.
func (b *Breakers) Allow(now time.Time, manual bool) (bool, string) {
	if b == nil || manual {
		return true, ""
	}
	if b.Paused {
		return false, RefillMessage
	}
	if !b.Open() {
		return true, ""
	}
	wait := b.OpenedAt.Add(FailureCooldown).Sub(now)
	if wait <= 0 {
		return true, fmt.Sprintf("compaction failed %d times in a row; trying once more", b.Failures)
	}
	return false, fmt.Sprintf("Automatic compaction failed %d times in a row and is paused for %s; run /compact to try now, or start a new cycle.",
		b.Failures, roundUpMinutes(wait))
}

func roundUpMinutes(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	if m == 1 {
		return "1 more minute"
	}
	return fmt.Sprintf("%d more minutes", m)
}

// Compacted records a successful compaction: it closes the failure breaker
// and starts counting tool rounds for the rapid-refill breaker, keeping its
// streak.
func (b *Breakers) Compacted() {
	if b == nil {
		return
	}
	b.Succeeded()
	b.Armed, b.Rounds = true, 0
}

// ToolRound records one round of tool calls.
func (b *Breakers) ToolRound() {
	if b == nil || !b.Armed {
		return
	}
	b.Rounds++
}

// AtThreshold records that the level reached the threshold again and
// reports whether automatic compaction is paused for the turn, with the
// message to show. Reaching it fewer than RefillRounds tool rounds after a
// compaction extends the streak of rapid refills; reaching it later ends
// the streak. The RefillLimit-th refill in a row pauses. Calls without a
// compaction in between count once.
func (b *Breakers) AtThreshold() (paused bool, message string) {
	if b == nil {
		return false, ""
	}
	if b.Armed {
		if b.Rounds < RefillRounds {
			b.Refills++
		} else {
			b.Refills = 0
		}
		b.Armed, b.Rounds = false, 0
	}
	if b.Refills >= RefillLimit {
		b.Paused = true
	}
	if b.Paused {
		return true, RefillMessage
	}
	return false, ""
}

// NewTurn lifts the rapid-refill pause and clears its streak: a new turn
// starts with fresh evidence.
func (b *Breakers) NewTurn() {
	if b == nil {
		return
	}
	b.Paused, b.Refills, b.Armed, b.Rounds = false, 0, false, 0
}

// Reset clears both breakers, as for a new cycle or session.
func (b *Breakers) Reset() {
	if b == nil {
		return
	}
	*b = Breakers{}
}

// Alerts returns one short line per active condition, for the model-facing
// status bar; nil when both breakers are closed. The lines depend only on
// the state, never on the clock.
func (b *Breakers) Alerts() []string {
	if b == nil {
		return nil
	}
	var out []string
	if b.Open() {
		out = append(out, fmt.Sprintf("compaction: failure breaker open after %d failures; retrying after %d min", b.Failures, int(FailureCooldown/time.Minute)))
	}
	if b.Paused {
		out = append(out, fmt.Sprintf("compaction: auto-compaction paused this turn (context refilled quickly %d times); read large outputs in slices", b.Refills))
	}
	return out
}
