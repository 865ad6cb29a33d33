package serial

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// A receiver that sends again does not deadlock, and its value arrives
// after the one it is handling, before the outer Send returns.
func TestReceiverMaySendAgain(t *testing.T) {
	var l Line[int]
	var got []int
	var recv func(int)
	recv = func(v int) {
		got = append(got, v)
		if v < 3 {
			l.Send(v+1, recv)
			if len(got) != v { // v+1 is queued, not yet delivered
				t.Errorf("value %d was delivered inside the receiver of %d", v+1, v)
			}
		}
	}
	l.Send(1, recv)
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("got %v, want [1 2 3]", got)
	}
}

// Calls never overlap, every value arrives once, and each sender's values
// arrive in its order. Run under -race.
func TestConcurrentSendersNeverOverlap(t *testing.T) {
	const senders, each = 8, 200
	var l Line[[2]int]
	var inside atomic.Int32
	var mu sync.Mutex
	last := make([]int, senders)
	for i := range last {
		last[i] = -1
	}
	count := 0
	recv := func(v [2]int) {
		if inside.Add(1) != 1 {
			t.Error("two deliveries overlapped")
		}
		mu.Lock()
		if v[1] <= last[v[0]] {
			t.Errorf("sender %d: %d arrived after %d", v[0], v[1], last[v[0]])
		}
		last[v[0]] = v[1]
		count++
		mu.Unlock()
		inside.Add(-1)
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				l.Send([2]int{s, i}, recv)
			}
		})
	}
	wg.Wait()
	// The last delivering Send returns only when the queue is empty.
	if count != senders*each {
		t.Fatalf("%d values delivered, want %d", count, senders*each)
	}
}

// A panicking receiver does not wedge the line.
func TestPanicLeavesTheLineUsable(t *testing.T) {
	var l Line[string]
	func() {
		defer func() { _ = recover() }()
		l.Send("boom", func(string) { panic("receiver failed") })
	}()
	var got []string
	l.Send("after", func(s string) { got = append(got, s) })
	if !slices.Equal(got, []string{"after"}) {
		t.Fatalf("got %v after a panic, want [after]", got)
	}
}

// A Send while another goroutine delivers returns at once; Flush waits
// until that goroutine has delivered it.
func TestFlushWaitsForAnotherGoroutinesDelivery(t *testing.T) {
	var l Line[string]
	release, started := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var got []string
	recv := func(s string) {
		if s == "slow" {
			close(started)
			<-release
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	go l.Send("slow", recv)
	<-started
	l.Send("queued", recv) // returns: the other goroutine is delivering
	mu.Lock()
	early := slices.Clone(got)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("delivered %v while the first delivery was held", early)
	}
	close(release)
	l.Flush()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []string{"slow", "queued"}) {
		t.Fatalf("after Flush got %v, want [slow queued]", got)
	}
}
