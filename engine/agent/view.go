package agent

import (
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// View is a session as of its last commit (or model switch): everything a
// display, the command line or a protocol front end reads of it. It is
// published once per commit and never changed afterwards, so it is the
// caller's to keep and read from any goroutine.
type View struct {
	// Meta is the stored header: ID, title, workspace, the model and
	// profile the session talks to, its cycle.
	Meta storage.Session
	// Level is the context's water level: the provider-billed size of the
	// last request plus estimates of what was appended since; Exact says
	// it is anchored, nothing estimated.
	Level int
	Exact bool
	// CompactAt and CycleAt are the levels at which auto-compaction
	// triggers and a cycle restarts (0 when cycles are off); the
	// compaction level follows Config.KeepUnder, never above the window's.
	CompactAt, CycleAt int
	// Window is the context window in force.
	Window int
	// Vision says the session's model accepts images (Config.Vision).
	Vision bool
	// Placement is where the status block goes, and CacheRule the
	// provider cache rule the cost estimates assume.
	Placement status.Placement
	CacheRule ledger.CacheRule
	// Fingerprint is the prefix fingerprint of the next request.
	Fingerprint prompt.Fingerprint
	// Alerts are the active alert lines: loop guard, compaction breakers,
	// the sandbox, skills. They are also in the status bar.
	Alerts []string
	// Checklist is the session's checklist.
	Checklist []todo.Item

	entries []transcript.Entry // the log's, shared; never changed
	turns   []rewind.Turn
}

// Messages returns the current cycle's messages. The slice is the
// caller's; the messages share their contents with the session's log and
// must not be modified.
func (v View) Messages() []transcript.Message {
	msgs := make([]transcript.Message, len(v.entries))
	for i := range v.entries {
		msgs[i] = v.entries[i].Msg
	}
	return msgs
}

// Turns returns every message the user sent in the session, oldest first,
// with its number and where the current log holds it (see rewind.Turn).
func (v View) Turns() []rewind.Turn { return rewind.Number(v.turns, v.entries) }

// Snapshot returns the session as of its last commit. It never waits for
// a running turn: an app showing a session whose turn runs in the
// background reads this.
func (s *Session) Snapshot() View { return *s.view.Load() }

// publish stores the view for lock-free readers. It runs with the session
// lock held, after every commit and model switch. It is cheap on this
// path, which every commit takes: the log's entries are shared, not
// copied.
func (s *Session) publish() {
	s.rw.Publish()
	m := s.model()
	v := &View{Meta: s.meta, Window: m.window(), Vision: m.Vision, Placement: s.cfg.StatusMode, CacheRule: m.CacheRule,
		Fingerprint: s.fp, Alerts: s.alerts(), Checklist: s.checklist.Items(), entries: s.log.Entries(), turns: s.turns.List()}
	v.Level, v.Exact = s.level()
	v.CompactAt, v.CycleAt = s.rw.Thresholds()
	s.view.Store(v)
}

// window is the context window of the model: the configured one, or the
// known-model table's.
func (m *ModelChoice) window() int {
	if m.ContextWindow > 0 {
		return m.ContextWindow
	}
	w, _ := tokens.Window(m.ModelName)
	return w
}
