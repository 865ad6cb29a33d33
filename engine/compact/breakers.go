package compact

import (
	"fmt"
	"time"

	"github.com/tally-dev/tally/internal/text"
)

// Circuit-breaker limits (DESIGN §4).
const (
	// failureLimit is the number of consecutive failed compactions that
	// opens the failure breaker.
	failureLimit = 3
	// failureCooldown is how long the open breaker waits before it lets
	// one probe compaction through.
	failureCooldown = 5 * time.Minute
	// refillRounds is the number of tool rounds after a compaction within
	// which reaching the threshold again counts as a rapid refill.
	refillRounds = 3
	// refillLimit is the number of rapid refills in a row that pauses
	// automatic compaction for the rest of the turn.
	refillLimit = 3
	// ThrashTurnLimit is the most cache-busting rebuilds one turn may
	// have: the next one pauses automatic compaction for the rest of the
	// turn.
	ThrashTurnLimit = 2
	// thrashWindow is the number of requests over which cache-busting
	// rebuilds are also counted (see [Breakers.BustsIn]).
	thrashWindow = 100
)

// thrashMessage explains a thrash pause to the model and the person.
var thrashMessage = fmt.Sprintf("Automatic compaction is paused for this turn: the history was rewritten %d times this turn, "+
	"and each rewrite makes the provider bill the cached context again at the full price. "+
	"Read large files in slices (read_file with offset and limit), narrow grep patterns, or start a new cycle.", ThrashTurnLimit+1)

// refillMessage explains a rapid-refill pause to the model and the person.
const refillMessage = "Automatic compaction is paused for this turn: the context filled up again within a few tool rounds of compacting, " +
	"3 times in a row, so some tool output is too large for the window. Read large files in slices (read_file with offset and limit), " +
	"narrow grep patterns, or start a new cycle or session."

// Breakers holds the circuit breakers of automatic compaction and the
// request statistics they and the pay-off forecast keep. The failure
// breaker stops retrying a compaction that keeps failing; the rapid-refill
// breaker stops compacting when each compaction is undone within a few tool
// rounds; the thrash breaker stops compacting when the history keeps being
// rewritten where the provider's cache already holds it. The zero value is
// closed and ready; the exported fields are its state, so it persists as
// JSON. It is not safe for concurrent use, and every method tolerates a nil
// receiver.
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
	// Busts holds the request numbers of the cache-busting rebuilds of
	// the last thrashWindow requests, oldest first; TurnBusts counts
	// those of the current turn.
	Busts     []int `json:"busts,omitempty"`
	TurnBusts int   `json:"turn_busts,omitempty"`
	// Thrashing is true when more than ThrashTurnLimit cache-busting
	// rebuilds this turn paused automatic compaction for the turn.
	Thrashing bool `json:"thrashing,omitempty"`
	// Growth measures how fast the context grows, for the pay-off
	// forecast (see [PlanAuto]).
	Growth Growth `json:"growth,omitzero"`
}

// Failed records a failed compaction at now. The failure-th failure in a row
// opens the breaker, and a failure while open (a failed probe) restarts the
// cooldown.
func (b *Breakers) Failed(now time.Time) {
	if b == nil {
		return
	}
	b.Failures++
	if b.Failures >= failureLimit {
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
	return b != nil && b.Failures >= failureLimit
}

// Allow reports whether a compaction may run at now, and if not, why. A
// manual compaction always may. An automatic one may not while the
// thrash or rapid-refill pause holds, nor while the failure breaker is open and its
// cooldown has not passed; after the cooldown one probe is allowed, and
// the reason says so.
func (b *Breakers) Allow(now time.Time, manual bool) (bool, string) {
	if b == nil || manual {
		return true, ""
	}
	if b.Thrashing {
		return false, thrashMessage
	}
	if b.Paused {
		return false, refillMessage
	}
	if !b.Open() {
		return true, ""
	}
	wait := b.OpenedAt.Add(failureCooldown).Sub(now)
	if wait <= 0 {
		return true, fmt.Sprintf("compaction failed %d times in a row; trying once more", b.Failures)
	}
	return false, fmt.Sprintf("Automatic compaction failed %d times in a row and is paused for %s; run /compact to try now, or start a new cycle.",
		b.Failures, roundUpMinutes(wait))
}

func roundUpMinutes(d time.Duration) string {
	return text.Plural(int((d+time.Minute-1)/time.Minute), "more minute")
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
// message to show. Reaching it fewer than refillRounds tool rounds after a
// compaction extends the streak of rapid refills; reaching it later ends
// the streak. The refillLimit-th refill in a row pauses. Calls without a
// compaction in between count once.
func (b *Breakers) AtThreshold() (paused bool, message string) {
	if b == nil {
		return false, ""
	}
	if b.Armed {
		if b.Rounds < refillRounds {
			b.Refills++
		} else {
			b.Refills = 0
		}
		b.Armed, b.Rounds = false, 0
	}
	if b.Refills >= refillLimit {
		b.Paused = true
	}
	if b.Paused {
		return true, refillMessage
	}
	return false, ""
}

// NewTurn lifts the rapid-refill and thrash pauses and clears their
// per-turn counts: a new turn starts with fresh evidence. The
// cache-busting rebuilds of the last thrashWindow requests stay counted.
func (b *Breakers) NewTurn() {
	if b == nil {
		return
	}
	b.Paused, b.Refills, b.Armed, b.Rounds = false, 0, false, 0
	b.TurnBusts, b.Thrashing = 0, false
}

// AutoPaused reports whether automatic compaction is paused for the rest
// of the turn, by the rapid-refill or the thrash breaker.
func (b *Breakers) AutoPaused() bool {
	return b != nil && (b.Paused || b.Thrashing)
}

// Busted records a cache-busting rebuild — one that rewrote a message the
// previous request had sent, or the system prompt — made after request
// requests of the session, and reports whether it paused automatic
// compaction for the turn, with the message to show. The
// ThrashTurnLimit+1-th such rebuild of a turn pauses; later ones report
// the pause again only through Allow and Alerts.
func (b *Breakers) Busted(request int) (paused bool, message string) {
	if b == nil {
		return false, ""
	}
	b.Busts = append(b.Busts, request)
	b.trim(request)
	b.TurnBusts++
	if b.TurnBusts > ThrashTurnLimit && !b.Thrashing {
		b.Thrashing = true
		return true, thrashMessage
	}
	return false, ""
}

// BustsIn returns how many cache-busting rebuilds were recorded within the
// last thrashWindow requests before request.
func (b *Breakers) BustsIn(request int) int {
	if b == nil {
		return 0
	}
	n := 0
	for _, r := range b.Busts {
		if r > request-thrashWindow {
			n++
		}
	}
	return n
}

// trim forgets the busts older than thrashWindow requests before request.
func (b *Breakers) trim(request int) {
	k := 0
	for k < len(b.Busts) && b.Busts[k] <= request-thrashWindow {
		k++
	}
	b.Busts = b.Busts[k:]
}

// Reset clears both breakers, as for a new cycle or session.
func (b *Breakers) Reset() {
	if b == nil {
		return
	}
	*b = Breakers{}
}

// Alerts returns one short line per active condition, for the model-facing
// status bar; nil when every breaker is closed. The lines depend only on
// the state, never on the clock.
func (b *Breakers) Alerts() []string {
	if b == nil {
		return nil
	}
	var out []string
	if b.Open() {
		out = append(out, fmt.Sprintf("compaction: failure breaker open after %d failures; retrying after %d min", b.Failures, int(failureCooldown/time.Minute)))
	}
	if b.Paused {
		out = append(out, fmt.Sprintf("compaction: auto-compaction paused this turn (context refilled quickly %d times); read large outputs in slices", b.Refills))
	}
	if b.Thrashing {
		last := 0
		if len(b.Busts) > 0 {
			last = b.Busts[len(b.Busts)-1]
		}
		out = append(out, fmt.Sprintf("compaction: auto-compaction paused this turn (%d cache-busting rewrites this turn, %d in the last %d requests); read large outputs in slices",
			b.TurnBusts, b.BustsIn(last), thrashWindow))
	}
	return out
}
