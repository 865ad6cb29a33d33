package mcp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A server's tool calls in flight, so that a form the server asks for
// during them pauses their timeouts (the person filling it in is not the
// server being slow) and is withdrawn once they all ended (stopped, timed
// out or answered).

// callClock is one call's timeout, which a form pauses.
type callClock struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	timer   *time.Timer
	left    time.Duration // what remains of the timeout since started
	started time.Time
	paused  int // forms waiting
}

// inflight holds each server's calls in flight; a server without calls
// has no entry.
var inflight = struct {
	mu    sync.Mutex
	calls map[*server]map[*callClock]struct{}
}{calls: map[*server]map[*callClock]struct{}{}}

// startCall starts a tool call's clock: the context ends when parent
// does, or when the server's call timeout has run (context.Cause is then
// context.DeadlineExceeded), not counting the time a form of the server
// waited for the user. The returned function ends the call.
func (s *server) startCall(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &callClock{ctx: ctx, cancel: cancel, left: s.cfg.CallTimeout(), started: time.Now()}
	c.timer = time.AfterFunc(c.left, func() { cancel(context.DeadlineExceeded) })
	inflight.mu.Lock()
	set := inflight.calls[s]
	if set == nil {
		set = map[*callClock]struct{}{}
		inflight.calls[s] = set
	}
	set[c] = struct{}{}
	inflight.mu.Unlock()
	return ctx, func() {
		c.timer.Stop()
		inflight.mu.Lock()
		delete(set, c)
		if len(set) == 0 { // set is still the server's: it held c until now
			delete(inflight.calls, s)
		}
		inflight.mu.Unlock()
		cancel(context.Canceled)
	}
}

func (c *callClock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused++
	if c.paused == 1 && c.timer.Stop() {
		c.left -= time.Since(c.started)
	}
}

func (c *callClock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused--
	if c.paused == 0 && c.ctx.Err() == nil {
		c.started = time.Now()
		c.timer.Reset(max(c.left, 0))
	}
}

// formContext is the context a form of the server is asked under: it ends
// when ctx (the server's request) does, or once every call in flight when
// the form came has ended. Those calls' timeouts pause until the returned
// function is called, which also releases the context.
func (s *server) formContext(ctx context.Context) (context.Context, func()) {
	inflight.mu.Lock()
	var calls []*callClock
	for c := range inflight.calls[s] {
		calls = append(calls, c)
	}
	inflight.mu.Unlock()
	fctx, cancel := context.WithCancel(ctx)
	var left atomic.Int64
	left.Store(int64(len(calls)))
	stops := make([]func() bool, 0, len(calls))
	for _, c := range calls {
		c.pause()
		stops = append(stops, context.AfterFunc(c.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		}))
	}
	return fctx, func() {
		for _, stop := range stops {
			stop()
		}
		for _, c := range calls {
			c.resume()
		}
		cancel()
	}
}
