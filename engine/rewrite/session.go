package rewrite

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Host is what a Session needs of the conversation it serves. Window and
// Model never wait for a running turn; the others are called with the
// conversation's lock held.
type Host interface {
	// Log is the current cycle's log; a Session only reads it.
	Log() *transcript.AppendLog
	// State is the rewrite-owned part of the conversation's state.
	State() *State
	// Level is the context level and whether it is exact.
	Level() (int, bool)
	// Anchor is the usage anchor of the last request.
	Anchor() *tokens.Anchor
	// PrefixTokens is the size of the system prompt and tool catalog.
	PrefixTokens() int
	// Window is the context window in force, and whether it is known
	// (configured or in the known-model table) rather than assumed.
	Window() (size int, known bool)
	// Model is the model the conversation talks to, with its prices.
	Model() Model
	// Requests counts the requests the conversation has made.
	Requests() int
	// Now is the conversation's clock.
	Now() time.Time
	// Meta is the stored session: its ID, workspace, cycle and creation.
	Meta() storage.Session
	// WorkingSet is the paths the conversation works on, newest last.
	WorkingSet() []string
	// Checklist is the conversation's checklist now.
	Checklist() []todo.Item
	// System and Catalog are the system prompt and tool catalog sent
	// now, which side requests replay to hit the provider's cache.
	System() string
	Catalog() []chat.Tool
	// Metered is the model for an engine call of kind, recorded in the
	// ledger.
	Metered(kind ledger.Kind) llm.Model
	// Rebuild applies a rewrite: the one writer of a rewritten log.
	Rebuild(Request) (Info, error)
	// Warn tells the user something a rewrite source decided (a breaker
	// holding compaction, a failed automatic compaction).
	Warn(msg string)
	// Soon announces the coming automatic compaction.
	Soon(Notice)
	// PreCompact runs before a compaction (manual: the user asked), and
	// Compacted after one; summarised says a summary or the memory file
	// replaced messages, so what the history names has changed.
	PreCompact(ctx context.Context, manual bool)
	Compacted(ctx context.Context, summarised bool)
	// SubagentLines is what a new cycle's seed says of the sub-agents.
	SubagentLines() []string
}

// Model is the model a conversation talks to, as the rewrite sources
// price it.
type Model struct {
	Name                string
	HitPrice, MissPrice float64
}

// Options are the settings a Session follows.
type Options struct {
	Store *storage.Store // where archives and superseded messages are read
	Mode  Mode           // what the compaction threshold does ("": Auto)
	Asker Asker          // asked first in Ask mode; nil: never ask, never compact
	// KeepUnder is the level the context is kept under: KeepAuto, 0 for
	// the window's default, or a level in tokens.
	KeepUnder int
	// CycleAt is the share of the window at which a cycle starts
	// (0: compact.DefaultCycleAt; negative: no cycles).
	CycleAt float64
	// NoFacts leaves the work record out of a compaction's summary.
	NoFacts bool
}

// Session is one conversation's rewrite sources: it decides before every
// request whether the conversation is compacted or rolls into a new
// cycle, and applies the rewrites the user asks for.
type Session struct {
	host   Host
	opt    Options
	notice notice
	// budget is the price-aware level and what it was computed from
	// (see Publish).
	budget atomic.Pointer[budgetState]
	turn   turnState
}

// turnState is what a Session remembers within one turn.
type turnState struct {
	emergencies   int  // emergency recoveries this turn
	rejectedAt    int  // the level the provider last rejected as too long
	declined      bool // the user declined compaction this turn (ask mode)
	warnedBreaker bool // the breaker message was shown this turn
}

// NewSession returns the rewrite sources of the conversation host.
func NewSession(host Host, opt Options) *Session {
	if opt.Mode == "" {
		opt.Mode = Auto
	}
	return &Session{host: host, opt: opt}
}

// Mode is the compaction mode the session follows.
func (r *Session) Mode() Mode { return r.opt.Mode }

// NewTurn forgets what the previous turn decided: its emergency
// recoveries, a declined compaction and a breaker message already shown.
func (r *Session) NewTurn() { r.turn = turnState{} }

// Warned notes that a breaker message was shown this turn, so that it is
// not shown again.
func (r *Session) Warned() { r.turn.warnedBreaker = true }

// notice is the compaction notice of the current crossing and the user's
// "Not now". It has its own lock: Postpone is called while a turn holds
// the conversation's.
type notice struct {
	mu    sync.Mutex
	shown bool // the notice of this crossing was decided (sent or not)
	// postpone is set by "Not now"; from is the level then.
	postpone bool
	from     int
}
