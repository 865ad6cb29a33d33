package agent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// A turn started while the app briefly read the session (the next status, the
// level) used to fail with ErrBusy, because "busy" was decided by TryLock
// on the lock those readers hold for an instant.
func TestBriefReadersNeverMakeATurnBusy(t *testing.T) {
	const turns = 30
	var replies []llmtest.Reply
	for range turns {
		replies = append(replies, llmtest.Text("ok"))
	}
	h := newHarness(t, llmtest.Sequence(replies...), nil)
	s := h.session("s1")
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_ = s.Audit().NextStatus() // takes the session lock for an instant
				_ = s.Snapshot().Level
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range turns {
		if _, err := s.Run(context.Background(), "hello"); errors.Is(err, ErrBusy) {
			t.Fatalf("turn %d failed as busy while only brief readers held the session", i+1)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	// Two turns at once are still refused.
	end, ok := s.beginWork()
	if !ok {
		t.Fatal("beginWork refused an idle session")
	}
	defer end()
	if _, err := s.Run(context.Background(), "again"); !errors.Is(err, ErrBusy) {
		t.Errorf("a second turn-like operation was not refused: %v", err)
	}
}
