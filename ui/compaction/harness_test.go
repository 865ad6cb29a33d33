package compaction

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// fakeOps stands in for the engine. It is called off the UI goroutine in
// the window, hence the mutex.
type fakeOps struct {
	mu        sync.Mutex
	plan      compact.Plan
	msgs      []transcript.Message
	archives  []cycle.Archive
	purgePlan rewrite.PurgePreview
	compacted int
	purged    int
	cycles    int
	postponed int
}

func (f *fakeOps) PreviewCompaction() (compact.Plan, error) { return f.plan, nil }

func (f *fakeOps) Compact(ctx context.Context) (rewrite.Result, error) {
	f.mu.Lock()
	f.compacted++
	f.mu.Unlock()
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
	return nil
}

func (f *fakeOps) Messages() []transcript.Message { return f.msgs }

func (f *fakeOps) ContextTokens() (int, bool) { return 21_000, false }

func (f *fakeOps) PostponeCompaction() {
	f.mu.Lock()
	f.postponed++
	f.mu.Unlock()
}

// fakeSession is the shown session as the window would keep it.
type fakeSession struct {
	ops     Ops
	running bool
	run     tw.RunState
	level   int
	notices []string
}

func (s *fakeSession) Ops() Ops      { return s.ops }
func (s *fakeSession) Shown() bool   { return true }
func (s *fakeSession) Running() bool { return s.running }
func (s *fakeSession) End() bool     { s.running = false; return true }
func (s *fakeSession) Hold(b bool)   { s.running = b }
func (s *fakeSession) Actions(bool)  {}
func (s *fakeSession) Idle() {
	if !s.run.Ended() {
		s.run = tw.RunState{}
	}
}
func (s *fakeSession) Run(r tw.RunState)       { s.run = r }
func (s *fakeSession) Level(n int, exact bool) { s.level = n }
func (s *fakeSession) Notice(t string)         { s.notices = append(s.notices, t) }

func (s *fakeSession) Begin(state string) (context.Context, bool) {
	if s.running {
		return nil, false
	}
	s.running, s.run = true, tw.Busy(state)
	return context.Background(), true
}

// harness shows the views in a test window over one fake session. Work
// runs its work at once and queues what it returns, which drain applies
// as the window's UI goroutine would later.
type harness struct {
	t     *testing.T
	win   fyne.Window
	views *Views
	sess  *fakeSession
	queue []func()
	said  []string // what the banner said
}

func newHarness(t *testing.T, ops Ops) *harness {
	t.Helper()
	test.NewTempApp(t)
	h := &harness{t: t, win: test.NewTempWindow(t, widget.NewLabel("")), sess: &fakeSession{ops: ops}}
	h.win.Resize(fyne.NewSize(1200, 800))
	say := func(msg string) { h.said = append(h.said, msg) }
	h.views = New(Host{
		Window: h.win, Work: h.work, Price: func() (ledger.Price, bool) { return ledger.Price{}, false },
		Info: say, Error: say, Current: func() Session { return h.sess }, Listed: func() {},
	})
	return h
}

func (h *harness) work(work func() func()) {
	if apply := work(); apply != nil {
		h.queue = append(h.queue, apply)
	}
}

// drain applies what the work queued.
func (h *harness) drain() {
	for len(h.queue) > 0 {
		q := h.queue
		h.queue = nil
		for _, fn := range q {
			fn()
		}
	}
}

// shown returns the first visible T drawn in the window's dialogs.
func shown[T fyne.CanvasObject](h *harness) T {
	var found T
	for _, o := range h.win.Canvas().Overlays().List() {
		if v := fynetest.Find[T](o, nil); any(v) != any(found) {
			return v
		}
	}
	return found
}

// shows reports whether a dialog draws s.
func (h *harness) shows(s string) bool {
	found := false
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetest.Walk(o, func(c fyne.CanvasObject) bool {
			switch v := c.(type) {
			case *widget.Label:
				found = found || strings.Contains(v.Text, s)
			case *widget.RichText:
				found = found || strings.Contains(v.String(), s)
			case *canvas.Text:
				found = found || strings.Contains(v.Text, s)
			}
			return !found
		})
	}
	return found
}

func samplePlan() (compact.Plan, []transcript.Message) { return samplePlanAt(time.Now()) }

// samplePlanAt is fynetest.SamplePlan: five messages, a cleared result and
// a summary of the middle three.
func samplePlanAt(now time.Time) (compact.Plan, []transcript.Message) {
	return fynetest.SamplePlan(now)
}
