// Package serial hands values to one receiver one at a time, in the order
// they were sent, from any number of goroutines, without holding a lock
// while the receiver runs. The receiver may therefore send again (its
// value is delivered right after it returns) or call code that sends,
// and never deadlocks on the line itself.
package serial

import "sync"

// Line delivers the values given to Send to a receiver, one call at a
// time. The zero Line is ready to use. Whoever sends while no delivery is
// under way delivers the queue until it is empty; a Send during a
// delivery queues its value and returns, and that value reaches the
// receiver before the delivering goroutine's Send returns. Values from one
// goroutine arrive in the order it sent them.
type Line[T any] struct {
	mu       sync.Mutex
	queue    []T
	draining bool
	idle     *sync.Cond // signalled when a delivery ends (Flush)
}

// Send queues v and, unless another goroutine is already delivering,
// delivers every queued value to to before it returns. A panic in to
// leaves the line usable: the values still queued go to the next Send.
func (l *Line[T]) Send(v T, to func(T)) {
	l.mu.Lock()
	l.queue = append(l.queue, v)
	if l.draining {
		l.mu.Unlock()
		return
	}
	l.draining = true
	defer func() {
		l.draining = false
		if l.idle != nil {
			l.idle.Broadcast()
		}
		l.mu.Unlock()
	}()
	for len(l.queue) > 0 {
		next := l.queue[0]
		var zero T
		l.queue[0] = zero
		l.queue = l.queue[1:]
		l.mu.Unlock()
		func() {
			defer l.mu.Lock()
			to(next)
		}()
	}
	l.queue = nil
}

// Flush returns once every value sent before it was called has been
// delivered, waiting for another goroutine's delivery to end. It must not
// be called from the receiver: it would wait for itself.
func (l *Line[T]) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.idle == nil {
		l.idle = sync.NewCond(&l.mu)
	}
	for l.draining {
		l.idle.Wait()
	}
}
