package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
)

// fakeOps stands in for the engine in the compaction, purge and archive
// views. It is called off the UI goroutine, hence the mutex.
type fakeOps struct {
	mu        sync.Mutex
	plan      compact.Plan
	msgs      []transcript.Message
	archives  []cycle.Archive
	purgePlan rewrite.PurgePreview
	compacted int
	purged    int
	cycles    int
	emit      func(agent.Event) // the session's OnEvent
	postponed int               // PostponeCompaction calls
}

func (f *fakeOps) PreviewCompaction() (compact.Plan, error) { return f.plan, nil }

func (f *fakeOps) Compact(ctx context.Context) (rewrite.Result, error) {
	f.mu.Lock()
	f.compacted++
	f.mu.Unlock()
	f.emit(agent.Event{Kind: agent.EventRebuild, Reason: "manual compaction", Rebuild: &rewrite.Info{
		Kind: rewrite.Compaction, Reason: "manual compaction", TokensBefore: 84_200, TokensAfter: 21_000, Summary: "We fixed calc.Add; tests pass."}})
	return rewrite.Result{Applied: true, TokensBefore: 84_200, TokensAfter: 21_000}, nil
}

func (f *fakeOps) Archives() ([]cycle.Archive, error) { return f.archives, nil }

func (f *fakeOps) NewCycle(ctx context.Context) error {
	f.mu.Lock()
	f.cycles++
	f.mu.Unlock()
	return nil
}

func (f *fakeOps) PreviewPurge(ctx context.Context) (rewrite.PurgePreview, error) {
	return f.purgePlan, nil
}

func (f *fakeOps) ApplyPurge(p rewrite.PurgePreview) error {
	f.mu.Lock()
	f.purged++
	f.mu.Unlock()
	f.emit(agent.Event{Kind: agent.EventRebuild, Reason: "purge", Rebuild: &rewrite.Info{
		Kind: rewrite.Purge, Reason: "purge", TokensBefore: p.Before, TokensAfter: p.After}})
	return nil
}

func (f *fakeOps) Messages() []transcript.Message { return f.msgs }

func (f *fakeOps) ContextTokens() (int, bool) { return 21_000, false }

func (f *fakeOps) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.compacted, f.purged
}

// fakeSession opens a session against a model that answers nothing and
// hands its compaction, purge and archive calls to f, whose events reach
// the window as the engine's would.
func fakeSession(t *testing.T, f *fakeOps) *harness {
	t.Helper()
	h := silentSession(t)
	f.emit = h.events()
	h.ui.live.ops = f
	h.ui.live.empty = false // f stands in for a session with a history
	h.ui.setIdleButtons()
	return h
}

// events returns the open session's event sink, as the engine sees it.
func (h *harness) events() func(agent.Event) {
	live := h.ui.live
	return h.ui.bridge.Events(func(e agent.Event) { h.ui.onEvent(live, e) })
}

func samplePlan() (compact.Plan, []transcript.Message) { return samplePlanAt(time.Now()) }

// samplePlanAt is a compaction plan over five messages stamped now: the
// micro layer clears a tool result, a summary would replace the middle
// three messages.
func samplePlanAt(now time.Time) (compact.Plan, []transcript.Message) {
	call := transcript.ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"calc/calc.go"}`}
	msgs := []transcript.Message{
		transcript.UserText("", "Fix calc.Add", now),
		transcript.AssistantReply("Reading it.", "", []transcript.ToolCall{call}, now),
		transcript.ToolResult(call, strings.Repeat("package calc\n", 200), false, now),
		transcript.AssistantReply("Fixed.", "", nil, now),
		transcript.UserText("", "Now run the tests", now),
	}
	after := append([]transcript.Message(nil), msgs...)
	after[2] = transcript.ToolResult(call, "[cleared]", false, now)
	plan := compact.Plan{
		Threshold: 60_000, Window: 128_000, Force: true, TokensBefore: 84_200, TokensAfter: 21_000,
		Messages: after, Tokens: []int{10, 20, 5, 10, 10},
		Pins: []compact.Pin{{Index: 0, Reason: "first user message"}, {Index: 4, Reason: "last user message"}},
		Layers: []compact.LayerReport{
			{Name: compact.LayerIntake, Ran: true, TokensBefore: 84_200, TokensAfter: 84_200},
			{Name: compact.LayerMicro, Ran: true, Changes: []compact.Change{{Index: 2, Action: compact.ActionCleared, TokensBefore: 2600, TokensAfter: 5}}, TokensBefore: 84_200, TokensAfter: 81_600},
			{Name: compact.LayerMemory, Skipped: "the workspace has no MEMORY.md", TokensBefore: 81_600, TokensAfter: 81_600},
			{Name: compact.LayerSummary, Ran: true, Estimated: true, Changes: []compact.Change{
				{Index: 1, Action: compact.ActionSummarise}, {Index: 2, Action: compact.ActionSummarise}, {Index: 3, Action: compact.ActionSummarise}},
				TokensBefore: 81_600, TokensAfter: 21_000},
		},
		NeedsSummary: true, Summarize: []int{1, 2, 3}, Keep: []int{0, 4},
		Cache: compact.CacheCost{InvalidatedTokens: 21_000, SystemChanges: true, FirstChanged: 2, SavedPerRequest: 63_200,
			MissHitRatio: 10, HitPrice: 0.028, MissPrice: 0.28, BreakEven: 2.99},
	}
	return plan, msgs
}
