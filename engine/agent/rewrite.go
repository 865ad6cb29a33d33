package agent

import (
	"context"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// rewriteHost lends the session to its rewrite sources (package
// rewrite): the log, the state they own, the level, the model and the
// one rebuild. Window and Model never wait; the rest run under s.mu.
type rewriteHost struct{ s *Session }

var _ rewrite.Host = rewriteHost{}

func (h rewriteHost) Log() *transcript.AppendLog { return h.s.log }
func (h rewriteHost) State() *rewrite.State      { return &h.s.st.State }
func (h rewriteHost) Level() (int, bool)         { return h.s.level() }
func (h rewriteHost) Anchor() *tokens.Anchor     { return &h.s.anchor }
func (h rewriteHost) PrefixTokens() int          { return h.s.prefixTok }
func (h rewriteHost) Requests() int              { return h.s.st.Requests }
func (h rewriteHost) Now() time.Time             { return h.s.cfg.now() }
func (h rewriteHost) Meta() storage.Session      { return h.s.meta }
func (h rewriteHost) WorkingSet() []string       { return h.s.st.WorkingSet.Paths }
func (h rewriteHost) Checklist() []todo.Item     { return h.s.checklist.Items() }
func (h rewriteHost) System() string             { return h.s.st.System }
func (h rewriteHost) Catalog() []chat.Tool       { return h.s.req.Catalog() }
func (h rewriteHost) SubagentLines() []string    { return h.s.subs.CycleLines() }

func (h rewriteHost) Metered(kind ledger.Kind) llm.Model { return h.s.metered(kind) }

func (h rewriteHost) Rebuild(w rewrite.Request) (rewrite.Info, error) { return h.s.rebuild(w) }

func (h rewriteHost) Window() (int, bool) {
	m := h.s.model()
	_, known := tokens.Window(m.ModelName)
	return m.window(), known || m.ContextWindow > 0
}

func (h rewriteHost) Model() rewrite.Model {
	m := h.s.model()
	return rewrite.Model{Name: m.ModelName, HitPrice: m.HitPrice, MissPrice: m.MissPrice}
}

func (h rewriteHost) Warn(msg string) { h.s.emit(Event{Kind: EventError, Err: msg}) }

func (h rewriteHost) Soon(n rewrite.Notice) {
	h.s.emit(Event{Kind: EventCompactionSoon, Notice: &n})
}

func (h rewriteHost) PreCompact(ctx context.Context, manual bool) {
	hookRunner(h).preCompact(ctx, manual)
}

// Compacted rebuilds the working set from what the history still shows
// when a summary replaced messages that named older paths, then runs the
// hooks that follow a compaction.
func (h rewriteHost) Compacted(ctx context.Context, summarised bool) {
	s := h.s
	if summarised {
		s.st.WorkingSet = workingSetOf(s.log.Messages(), s.st.WorkingSet)
	}
	hookRunner{s}.compacted(ctx)
}
