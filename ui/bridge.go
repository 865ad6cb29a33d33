package ui

import (
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
)

// flushInterval is how often streamed text reaches the screen (~30/s).
const flushInterval = 33 * time.Millisecond

// Bridge carries work between the UI goroutine and the others. It is the
// only place in the UI that starts a goroutine or calls fyne.Do:
// everything else hands it a function — Work for slow work whose result
// the UI applies, Watch for a long-lived watcher, Await for jobs a closing
// window waits for — and engine events are copied before they cross over.
// Read what the work needs of the UI's state on the UI goroutine, before
// handing it over: the work must not touch widgets or UI fields.
type Bridge struct {
	do func(func()) // runs a function on the UI goroutine, in order
}

// NewBridge returns a Bridge that posts to Fyne's UI goroutine.
func NewBridge() *Bridge { return &Bridge{do: fyne.Do} }

// newBridgeWith returns a Bridge posting through do (used by tests, which
// drain a queue on the test goroutine).
func newBridgeWith(do func(func())) *Bridge { return &Bridge{do: do} }

// Do runs fn on the UI goroutine without waiting for it.
func (b *Bridge) Do(fn func()) { b.do(fn) }

// Work runs work off the UI goroutine and then applies what it returns on
// the UI goroutine, in that order; a nil apply means nothing to apply. It
// is the one way the UI does slow work (the store, the engine, the
// network) without blocking the window.
func (b *Bridge) Work(work func() (apply func())) {
	go func() {
		if apply := work(); apply != nil {
			b.Do(apply)
		}
	}()
}

// Watch runs watch on a goroutine of its own for as long as it takes (a
// signal watcher, say); whatever it has the UI do goes through Do.
func (b *Bridge) Watch(watch func()) { go watch() }

// Await runs every job at once off the UI goroutine and waits until all
// have returned or d has passed, whichever comes first; it reports whether
// all returned. Jobs still running after d go on unwatched. It blocks its
// caller, so the UI uses it only while the window closes.
func (b *Bridge) Await(d time.Duration, jobs ...func()) bool {
	var wg sync.WaitGroup
	wg.Add(len(jobs))
	for _, job := range jobs {
		go func() {
			defer wg.Done()
			job()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// After runs fn on the UI goroutine once d has passed. Stop the returned
// timer to cancel it.
func (b *Bridge) After(d time.Duration, fn func()) *time.Timer {
	return time.AfterFunc(d, func() { b.do(fn) })
}

// Events returns an agent.Config.OnEvent function that copies every event
// and delivers it to handle on the UI goroutine, in order. Streamed deltas
// are merged and delivered at most about 30 times a second; any other event
// first flushes the deltas before it, so the order is kept.
func (b *Bridge) Events(handle func(agent.Event)) func(agent.Event) {
	s := &eventStream{b: b, handle: handle}
	return s.event
}

type eventStream struct {
	b      *Bridge
	handle func(agent.Event)

	mu        sync.Mutex
	content   strings.Builder
	reasoning strings.Builder
	step      int
	session   string
	timer     *time.Timer
}

func (s *eventStream) event(e agent.Event) {
	if e.Kind == agent.EventDelta && e.Delta != nil {
		s.mu.Lock()
		s.content.WriteString(e.Delta.Content)
		s.reasoning.WriteString(e.Delta.Reasoning)
		s.step, s.session = e.Step, e.Session
		if s.timer == nil {
			s.timer = time.AfterFunc(flushInterval, s.flushTimer)
		}
		s.mu.Unlock()
		return
	}
	c := copyEvent(e)
	s.mu.Lock()
	s.flushLocked()
	handle := s.handle
	s.b.do(func() { handle(c) })
	s.mu.Unlock()
}

func (s *eventStream) flushTimer() {
	s.mu.Lock()
	s.flushLocked()
	s.mu.Unlock()
}

// flushLocked posts the merged deltas. Posting while holding the lock keeps
// deltas and other events in engine order.
func (s *eventStream) flushLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if s.content.Len() == 0 && s.reasoning.Len() == 0 {
		return
	}
	d := agent.Delta{Content: s.content.String(), Reasoning: s.reasoning.String()}
	s.content.Reset()
	s.reasoning.Reset()
	e := agent.Event{Kind: agent.EventDelta, Step: s.step, Session: s.session, Delta: &d, Time: time.Now()}
	handle := s.handle
	s.b.do(func() { handle(e) })
}

// copyEvent returns a deep copy of e that shares no memory with the engine.
func copyEvent(e agent.Event) agent.Event {
	c := e
	if e.Message != nil {
		m := copyMessage(*e.Message)
		c.Message = &m
	}
	if e.Delta != nil {
		d := *e.Delta
		c.Delta = &d
	}
	if e.Call != nil {
		call := *e.Call
		c.Call = &call
	}
	if e.Usage != nil {
		u := *e.Usage
		c.Usage = &u
	}
	if e.Retry != nil {
		r := *e.Retry
		c.Retry = &r
	}
	if e.Drift != nil {
		d := *e.Drift
		c.Drift = &d
	}
	if e.Rebuild != nil {
		r := *e.Rebuild
		if r.Fidelity != nil {
			f := *r.Fidelity
			r.Fidelity = &f
		}
		c.Rebuild = &r
	}
	if e.Notice != nil {
		n := *e.Notice
		n.Plan = copyPlan(n.Plan)
		c.Notice = &n
	}
	if e.Form != nil {
		c.Form = &mcp.FormRequest{ID: e.Form.ID, Form: e.Form.Form.Clone()}
	}
	c.Checklist = append([]todo.Item(nil), e.Checklist...)
	return c
}

// copyPlan returns a copy of a compaction plan whose slices are its own.
func copyPlan(p compact.Plan) compact.Plan {
	msgs := make([]transcript.Message, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = copyMessage(m)
	}
	p.Messages = msgs
	p.Tokens = append([]int(nil), p.Tokens...)
	p.Pins = append([]compact.Pin(nil), p.Pins...)
	p.Layers = append([]compact.LayerReport(nil), p.Layers...)
	p.Summarize = append([]int(nil), p.Summarize...)
	p.Keep = append([]int(nil), p.Keep...)
	if p.Auto != nil {
		d := *p.Auto
		d.Candidates = append([]compact.Candidate(nil), d.Candidates...)
		p.Auto = &d
	}
	return p
}

func copyMessage(m transcript.Message) transcript.Message {
	m.Blocks = append([]transcript.Block(nil), m.Blocks...)
	m.ToolCalls = append([]transcript.ToolCall(nil), m.ToolCalls...)
	m.Paths = append([]string(nil), m.Paths...)
	return m
}
