package ui

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/internal/fynetest"
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

// samplePlanAt is fynetest.SamplePlan: five messages, a cleared result and
// a summary of the middle three.
func samplePlanAt(now time.Time) (compact.Plan, []transcript.Message) {
	return fynetest.SamplePlan(now)
}
