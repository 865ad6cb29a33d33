package ui

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/tally-dev/tally/engine/workbench"
)

// closeGrace is how long a SIGTERM or SIGINT waits for the window to close
// before the app's socket is removed directly and the process exits.
const closeGrace = 5 * time.Second

// closeOnSignal makes SIGTERM and SIGINT close the app as its window's
// close button does: closeApp runs on the UI goroutine (it saves the
// draft, stops the sessions, stops serving the command line — which
// removes the socket and its token — and closes the store). If the UI
// goroutine has not got to it within closeGrace, stopServing runs here and
// exit(1) ends the process, so a kill never leaves the socket behind. The
// returned function stops watching.
func closeOnSignal(b *Bridge, closeApp, stopServing func(), exit func(int)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
	done := make(chan struct{})
	var once sync.Once
	b.Watch(func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		closed := make(chan struct{})
		b.Do(func() {
			defer close(closed)
			closeApp()
		})
		select {
		case <-closed:
		case <-time.After(closeGrace):
			stopServing()
			exit(1)
		}
	})
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}

// servingStop records the stop function of the app's command-line server
// for closeOnSignal's fallback, which runs off the UI goroutine.
type servingStop struct {
	mu   sync.Mutex
	stop func()
}

// wrap returns serve recording the stop function it returns.
func (s *servingStop) wrap(serve func(*workbench.Workbench) (func(), error)) func(*workbench.Workbench) (func(), error) {
	if serve == nil {
		return nil
	}
	return func(wb *workbench.Workbench) (func(), error) {
		stop, err := serve(wb)
		s.mu.Lock()
		s.stop = stop
		s.mu.Unlock()
		return stop, err
	}
}

// run calls the recorded stop function, if any (it may run twice: the
// server's stop is idempotent).
func (s *servingStop) run() {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}
