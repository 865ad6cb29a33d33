package rewrite

import (
	"context"
	"errors"
	"fmt"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Kind is what rewrote the log.
type Kind string

// The kinds of rewrite.
const (
	Compaction Kind = "compaction" // the cascade (automatic, manual or idle)
	Emergency  Kind = "emergency"  // recovery from "context length exceeded"
	Purge      Kind = "purge"      // the model-driven purge
	Cycle      Kind = "cycle"      // a new cycle
	Rewind     Kind = "rewind"     // the user rewound the conversation to one of their messages
)

// Info describes a rewrite of the log, for the event a display shows.
type Info struct {
	Kind         Kind   `json:"kind"`
	Reason       string `json:"reason"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Summary      string `json:"summary,omitempty"`
	Cycle        int    `json:"cycle,omitempty"`
	// MissTokens is what the rewrite cost in cache terms: the tokens the
	// provider bills as misses once because of it — the next request from
	// the first changed message on (all of it when the system prompt
	// changed) and the uncached input of a summary request.
	MissTokens int `json:"miss_tokens,omitempty"`
	// PaysBackAfter is the number of later requests after which the
	// rewrite has cost less than keeping the history, at the configured
	// prices (compact.CacheCost.BreakEven): 0 when it cost nothing, -1
	// when it saved nothing.
	PaysBackAfter float64 `json:"pays_back_after,omitempty"`
	// CacheBusting is true when the rewrite changed a message the previous
	// request had sent, or the system prompt, so the provider's cache
	// misses from there on. The thrash breaker counts these.
	CacheBusting bool `json:"cache_busting,omitempty"`
	// Fidelity counts what a compaction did to the messages (kept
	// verbatim, summarised, dropped but recallable, gone); nil for other
	// rewrites.
	Fidelity *compact.Fidelity `json:"fidelity,omitempty"`
	// Record is the work record a compaction carries into the rebuilt
	// context (files, commands, failed checks, sub-agents, checklist), as
	// the model reads it; "" for other rewrites.
	Record string `json:"record,omitempty"`
	// Files is what a rewind did to the files (rewind.Result.FilesShown):
	// the number restored, -1 when they were left as they were; nil for
	// other rewrites.
	Files *int `json:"files,omitempty"`
}

// Request is one rewrite of the conversation, as the session's rebuild
// applies it.
type Request struct {
	Kind     Kind
	Reason   string
	Messages []transcript.Message // the log that replaces the current one
	// State changes the rewrite-owned state with the rewrite (the summary
	// section, what compaction carries, a new cycle's fields); the rebuild
	// derives the system prompt from it and restores it all when the
	// store refuses the rewrite.
	State func(st *State)
	// Cycle, when not 0, is the cycle the rewrite opens: Messages start
	// its log, and the current log stays in the store as the closed
	// cycle's, so nothing is superseded.
	Cycle int
	// Detail is the rebuild record's detail line.
	Detail string
	// Summary is what the rebuild event shows of the new history (a
	// compaction summary, a cycle's hand-off brief).
	Summary string
	// Call is the cost of the model call that made the rewrite (a
	// compaction summary), added to the rewrite's own cache cost.
	Call compact.CacheCost
	// Extra, when not nil, runs in the rewrite's transaction.
	Extra func(tx *storage.Tx) error
	// Describe, when not nil, completes the event's Info.
	Describe func(*Info)
}

// Mode says what happens when the context reaches the auto-compaction
// threshold.
type Mode string

// Compaction modes.
const (
	Auto Mode = "auto" // compact without asking (default)
	Ask  Mode = "ask"  // ask the Asker first; headless: skip
	Off  Mode = "off"  // never compact automatically; cycles still roll
)

// ParseMode accepts "", auto, ask or off.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return Auto, nil
	case Auto, Ask, Off:
		return Mode(s), nil
	}
	return "", fmt.Errorf("compaction mode %q is not auto, ask or off", s)
}

// Asker is asked before an automatic compaction in Ask mode: it sees the
// dry-run plan and answers whether to apply it. It should return
// ctx.Err() when ctx is done first.
type Asker interface {
	AskCompaction(ctx context.Context, plan compact.Plan) (bool, error)
}

// Result is what a compaction did.
type Result struct {
	Plan         compact.Plan `json:"plan"`
	Source       string       `json:"source,omitempty"` // summary, memory, or "" (cheap layers only)
	TokensBefore int          `json:"tokens_before"`
	TokensAfter  int          `json:"tokens_after"`
	Applied      bool         `json:"applied"`
	// MissTokens and PaysBackAfter are the rewrite's cost in cache terms
	// and when it pays back, as on its Info.
	MissTokens    int     `json:"miss_tokens,omitempty"`
	PaysBackAfter float64 `json:"pays_back_after,omitempty"`
}

// ErrNothingToCompact is returned by a manual compaction that would change
// nothing.
var ErrNothingToCompact = errors.New("there is nothing to compact yet; the history has no messages that can be cleared or summarised")

// ErrSummaryTooLong is returned by a compaction whose model-written summary
// was no smaller than the messages it would replace: the history is kept.
var ErrSummaryTooLong = errors.New("the model's summary was no shorter than the messages it would replace, so the history was kept; compact later, when there is more to summarise, or use a stronger model for summaries")

// Notice is the announcement of an automatic compaction before it runs:
// where the level is, where compaction starts, and the dry run of what it
// would keep, summarise and drop if it ran now.
type Notice struct {
	Level     int `json:"level"`     // the context level, status reserve included
	Mark      int `json:"mark"`      // the level at which the notice is sent
	Threshold int `json:"threshold"` // the auto-compaction threshold
	// Plan is the dry run of the automatic compaction as it would run now
	// (compact.PlanAuto); its Fidelity holds the counts. Its messages are
	// copies.
	Plan compact.Plan `json:"plan"`
}

// Percent is the level as a whole percentage of the threshold (91 for
// 91 %).
func (n Notice) Percent() int {
	if n.Threshold <= 0 {
		return 0
	}
	return n.Level * 100 / n.Threshold
}

// NoticeFraction places the compaction notice: when the level reaches
// this share of the auto-compaction threshold, the notice says what the
// coming compaction would keep and drop, early enough to read it or
// answer "Not now" before it runs.
const NoticeFraction = 0.90

// PostponeStep is how far past the threshold (a share of it) the level
// must rise before a postponed automatic compaction runs after all: with
// a 63K threshold, "Not now" at 58K lets the context grow to about 70K.
const PostponeStep = 0.10

// StatusReserve is the tokens kept for the status block at the tail when
// the level is compared with a threshold.
const StatusReserve = 200

// MemoryFile is the workspace file that may stand in for a summary.
const MemoryFile = "MEMORY.md"

// MaxMemoryBytes caps what is read of MemoryFile.
const MaxMemoryBytes = 64 << 10
