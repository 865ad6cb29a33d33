package agent

import (
	"time"

	"github.com/tally-dev/tally/engine/diag"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// DefaultMaxSteps is the per-turn limit of model requests.
const DefaultMaxSteps = 50

// Config is what a session needs from its host (the CLI or the GUI).
type Config struct {
	Store *storage.Store
	// ModelChoice is the model the session talks to: its client, name,
	// endpoint profile, window, prices and what it can do.
	ModelChoice
	// Roles give the engine's own calls a model of their own, by the
	// ledger kind they are recorded under: ledger.KindSubagent for the
	// task tool's sub-agents, KindSummary for compaction summaries,
	// KindBrief for the hand-off briefs of new cycles. A kind not listed
	// uses the session's model.
	Roles    map[ledger.Kind]ModelChoice
	Approver tool.Approver // nil: deny every call that needs approval
	MaxSteps int           // 0: DefaultMaxSteps
	Now      func() time.Time
	// UserConfigDir is where the user's AGENTS.md lives; "" skips it, and
	// the user's MCP file (see MCPOptions) too.
	UserConfigDir string
	ShellTimeout  time.Duration
	// Mode is the permission mode; "" keeps the session's stored mode
	// (ask for a new session). Shell is what commands are allowed.
	Mode  tool.Mode
	Shell ShellConfig
	// AllowCommands and DenyCommands are command rules (see package
	// cmdrule) for this session only, on top of the workspace's stored
	// ones; they are not stored. An invalid one fails the session's
	// opening.
	AllowCommands, DenyCommands []string
	// Roots are the session's additional folders (an editor's additional
	// directories, see workspace.Roots): they replace the stored ones,
	// and an empty non-nil list clears them; nil keeps what is stored.
	Roots []string
	// TempRoot holds the sessions' private temporary directories; "" means
	// a folder under the system's temporary directory.
	TempRoot string
	// OnEvent receives every event, one call at a time: from the goroutine
	// running a turn, from running sub-agents and from the MCP servers'
	// watchers. Calls never overlap, and the events of each source arrive
	// in the order they happened. No session lock is held while it runs,
	// so it may call the session's methods that never wait (Snapshot,
	// Permissions().SetMode, answering a form, …), and the events those
	// cause arrive after it returns. It must return quickly and must not
	// call a method that waits for the turn (Run, Compaction().Apply, …):
	// it may be running on the turn's goroutine. The GUI copies the event
	// and hands it over.
	OnEvent func(Event)
	// StatusMode places the <agent_status> block: status.Tail (the
	// engine's default) sends only the newest one at the tail of each
	// request, outside the log; status.Append appends each one to the log;
	// status.OnChange appends one only when it changed; status.Off sends
	// none.
	StatusMode status.Placement
	// NoChecklist leaves the checklist's tools out of the catalog, for
	// measuring what the checklist is worth; the app never sets it.
	NoChecklist bool
	// ToolCallLimit caps tool calls per turn (DefaultToolCallLimit when 0).
	ToolCallLimit int
	// Subagents sets the task tool's limits, or turns it off.
	Subagents subagent.Config
	// Renderer renders the status block; nil uses status.Render.
	Renderer status.Renderer
	// NoCompactionFacts makes compactions keep only what they kept before
	// the user's words, the work record and the dropped index were added
	// (see compact.Input.NoFacts): for measuring what those cost, never
	// set by the app.
	NoCompactionFacts bool
	// NoDiagnostics turns off the checks run after file writes; DiagRules
	// replaces the default rules (gofmt and go vet for Go files).
	NoDiagnostics bool
	DiagRules     []diag.Rule
	// Compaction is what happens at the auto-compaction threshold
	// (rewrite.Auto when empty); rewrite.Asker answers in rewrite.Ask mode.
	Compaction rewrite.Mode
	Asker      rewrite.Asker
	// CycleAt is the share of the window at which a new cycle starts:
	// 0 means compact.DefaultCycleAt, a negative value turns cycles off.
	CycleAt float64
	// KeepUnder is the level the context is kept under: 0 is the
	// window's default compaction threshold, rewrite.KeepAuto the price-aware
	// level (compact.Budget), and a positive value a level in tokens; none
	// goes above the window's default.
	KeepUnder int
	// CheckpointBytes caps the compressed file content the checkpoints of
	// the session's workspace keep (see checkpoint.Limits.StoreBytes);
	// 0 means checkpoint.DefaultStoreBytes.
	CheckpointBytes int64
	// MCP tunes the session's MCP servers; the zero value runs the user's
	// and the workspace's trusted ones (see MCPOptions).
	MCP MCPOptions
	// Forms says the host answers the forms MCP servers ask for during a
	// call: each arrives as an EventForm and waits for MCP.AnswerForm.
	// False declines every form at once, with an EventMCP saying no one is
	// there to fill it in.
	Forms bool
	// LSP configures the workspace's language servers (see LSPConfig).
	LSP LSPConfig
	// PrepareSnapshots takes the workspace's checkpoint snapshot in the
	// background when the session's first turn starts, while the model
	// thinks, so that its first command pays only for what changed since
	// (see filehistory.Recorder.Prepare). Closing the session cancels a
	// snapshot still under way.
	PrepareSnapshots bool
	// Editor is the editor the session is driven from, when it offers its
	// buffers (an ACP client with file-system support): the file tools
	// read text from it and tell it what they wrote (see tool.Editor).
	Editor tool.Editor
	// Hooks tunes the session's command hooks; the zero value runs the
	// user's and the workspace's trusted ones (see HooksOptions).
	Hooks HooksOptions
	// OnClose, when set, runs at the end of every Close (the host's
	// record of which sessions are open).
	OnClose func()
}

// DedupeMin is the size from which a tool result identical to an earlier
// one is sent as a <TOOL_RESULT_REF> reference.
const DedupeMin = 1024

// WireRules are the wire rules of every session: fold repeated
// <turn_meta> blocks and deduplicate large identical tool results, except
// those of tools that write.
func WireRules() transcript.WireRules {
	return transcript.WireRules{FoldTurnMeta: true, DedupeMin: DedupeMin, Exempt: func(name string) bool {
		return name == "write_file" || name == "edit_file"
	}}
}

// DefaultToolCallLimit is the per-turn tool call budget shown to the model.
const DefaultToolCallLimit = 200

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
