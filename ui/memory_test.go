package ui

import (
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Memory is handed back once the chat has shown no new row for a while,
// and again once the textures of the rows scrolled past have expired; a
// new row meanwhile puts both off.
func TestMemoryIsHandedBackWhenTheChatIsQuiet(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("hi")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	var times []time.Time
	const soon, late = time.Second, 2 * time.Second
	filled := h.ui.memoryReleaser(soon, late, func() func() {
		return func() { times = append(times, time.Now()) }
	})
	for range 49 { // rows keep coming: each puts the release off
		filled()
	}
	last := time.Now() // the last row comes after this
	filled()
	waitCount := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(times) < want && time.Now().Before(deadline); {
			h.q.drain()
			time.Sleep(5 * time.Millisecond)
		}
		if len(times) != want {
			t.Fatalf("released %d times; want %d", len(times), want)
		}
	}
	waitCount(1)
	if d := times[0].Sub(last); d < soon {
		t.Errorf("the first release came %v after the last row, before %v", d, soon)
	}
	waitCount(2)
	if d := times[1].Sub(last); d < late+soon {
		t.Errorf("the second release came %v after the last row, before the textures expired (%v)", d, late+soon)
	}
	trimCHeap() // the C library's trim can be called at any time
}
