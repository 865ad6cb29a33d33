package agent

import (
	"time"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
)

// EventKind names what happened.
type EventKind string

// Event kinds, in the order a turn usually produces them.
const (
	EventTurnStart EventKind = "turn_start" // a user turn began
	EventMessage   EventKind = "message"    // a message was appended and committed
	EventDelta     EventKind = "delta"      // streamed text or reasoning arrived
	EventToolStart EventKind = "tool_start" // a tool call is about to run
	EventUsage     EventKind = "usage"      // a response's usage re-anchored the count
	EventRetry     EventKind = "retry"      // a request failed and will be retried
	EventRebuild   EventKind = "rebuild"    // the log was rewritten (with a record)
	EventChecklist EventKind = "checklist"  // the checklist changed; Checklist holds it
	EventDrift     EventKind = "drift"      // the prompt prefix changed; Drift says how
	EventError     EventKind = "error"      // something failed; Err says what
	EventTurnEnd   EventKind = "turn_end"   // the turn ended; Reason says why

	// EventCompactionSoon says an automatic compaction is coming: the
	// level crossed the notice mark (rewrite.NoticeFraction of the threshold) and
	// the gate would let a compaction run. Notice holds the dry run. It is
	// sent once per crossing and never waits for an answer; answer "Not
	// now" with Session.Compaction().Postpone.
	EventCompactionSoon EventKind = "compaction_soon"

	// Sub-agent events carry Subagent, the child's info as of the event
	// (its ID, the parent's task call ID, title, status, steps, tokens).
	EventSubagentStart     EventKind = subagent.UpdateStart     // a task call's child started
	EventSubagentMessage   EventKind = subagent.UpdateMessage   // the child committed a message; Message and Index hold it
	EventSubagentStep      EventKind = subagent.UpdateStep      // the child got a reply; Step is its step count
	EventSubagentChecklist EventKind = subagent.UpdateChecklist // the child's checklist changed; Checklist holds it
	EventSubagentEnd       EventKind = subagent.UpdateEnd       // the child ended; Reason says how, Err why it failed
)

// Event is one thing the engine reports to the UI or the CLI. Events are
// values: they share no memory with the engine, so a receiver may keep them
// or hand them to another goroutine.
type Event struct {
	Kind    EventKind            `json:"kind"`
	Session string               `json:"session"`
	Time    time.Time            `json:"time"`
	Step    int                  `json:"step,omitempty"`
	Index   int                  `json:"index,omitempty"` // log index of an appended message
	Message *transcript.Message  `json:"message,omitempty"`
	Delta   *Delta               `json:"delta,omitempty"`
	Call    *transcript.ToolCall `json:"call,omitempty"`
	Usage   *Usage               `json:"usage,omitempty"`
	Retry   *llm.Retry           `json:"retry,omitempty"`
	Err     string               `json:"error,omitempty"`
	Reason  string               `json:"reason,omitempty"`
	// Checklist is the whole list after a change (a copy).
	Checklist []todo.Item `json:"checklist,omitempty"`
	// Drift describes a change of the prompt prefix.
	Drift *prompt.Drift `json:"drift,omitempty"`
	// Rebuild describes a rewrite of the log (compaction, cycle, purge).
	Rebuild *rewrite.Info `json:"rebuild,omitempty"`
	// Subagent is the child of a sub-agent event (a copy).
	Subagent *subagent.Info `json:"subagent,omitempty"`
	// Notice is what EventCompactionSoon announces.
	Notice *rewrite.Notice `json:"notice,omitempty"`
	// Form is the form of EventForm and EventFormDone (a copy).
	Form *mcp.FormRequest `json:"form,omitempty"`
}

// Delta is one piece of a streamed reply: text, reasoning or both.
type Delta = llm.Delta

// Usage is what one response cost and where it left the context.
type Usage struct {
	// Row is the ledger row the response committed, exactly as stored:
	// its request number, kind, counts, level, drift and rebuild. A
	// receiver displays it and derives nothing from the fields below.
	Row              ledger.Row    `json:"row"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	CacheHitTokens   int           `json:"cache_hit_tokens"`
	CacheMissTokens  int           `json:"cache_miss_tokens"`
	CacheReported    bool          `json:"cache_reported"`
	ContextTokens    int           `json:"context_tokens"` // the anchored level after the response
	Exact            bool          `json:"exact"`          // ContextTokens is the billed count, nothing estimated
	Model            string        `json:"model"`
	Window           int           `json:"window"`
	Duration         time.Duration `json:"duration"`
	Attempts         int           `json:"attempts"`
	First            bool          `json:"first"` // the first request since the session was opened (the cache may be cold)
	WarmUp           bool          `json:"warm_up,omitempty"`
	// CompactAt and CycleAt are the session's thresholds after the
	// request (see View.CompactAt): the compaction level follows the
	// context budget, so it can move as the session goes.
	CompactAt int `json:"compact_at,omitempty"`
	CycleAt   int `json:"cycle_at,omitempty"`
	// Note says which impossible counts the server reported were replaced
	// (see llm.Usage.Note); empty when the usage was taken as sent.
	Note string `json:"note,omitempty"`
}
