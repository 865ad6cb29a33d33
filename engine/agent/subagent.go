package agent

import (
	"context"
	"time"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Subagents returns the session's sub-agents: listing them, reading one's
// transcript and stopping one that runs. Its readers never wait for a
// running turn.
func (s *Session) Subagents() *subagent.Hub { return s.subs }

// carrySubagents runs after a rebuild of the log (see pendingRebuild):
// the reminder listing the sub-agents whose reports left the log, if any
// did (subagent.Hub.CarryOver).
func (t *turnLoop) carrySubagents() error {
	s := t.s
	if s.pendingRebuild == "" {
		return nil
	}
	text, err := s.subs.CarryOver(s.log, s.pendingRebuild)
	if err != nil || text == "" {
		return err
	}
	return s.commit([]transcript.Message{transcript.Injected(transcript.KindReminder, text, s.cfg.now())}, nil)
}

// parent is what a session lends its sub-agents (subagent.Parent). A child
// runs while its parent's turn holds the session lock, so it reads only
// what does not change during a turn and what has locks of its own.
type parent struct{ s *Session }

func (p parent) ID() string                      { return p.s.meta.ID }
func (p parent) Workspace() string               { return p.s.meta.Workspace }
func (p parent) Cycle() int                      { return p.s.meta.Cycle }
func (p parent) Now() time.Time                  { return p.s.cfg.now() }
func (p parent) Store() *storage.Store           { return p.s.cfg.Store }
func (p parent) Gate() *tool.Gate                { return p.s.gate }
func (p parent) Env() tool.Env                   { return p.s.env }
func (p parent) WireRules() transcript.WireRules { return wireRules(p.s.cfg.Store, p.s.model().Vision) }
func (p parent) Model() string                   { return p.s.roleModel(ledger.KindSubagent).ModelName }
func (p parent) Window() int                     { m := p.s.roleModel(ledger.KindSubagent); return m.window() }

func (p parent) Send(ctx context.Context, req llm.Request) (*llm.Response, error) {
	m := p.s.roleModel(ledger.KindSubagent)
	return m.Model.Stream(ctx, m.keyed(p.s.meta.ID, ledger.KindSubagent, req), llm.Callbacks{})
}

func (p parent) Row(resp *llm.Response, messages int) ledger.Row {
	return p.s.newRow(ledger.KindSubagent, resp, messages, p.s.cfg.now())
}

func (p parent) AddRow(tx *storage.Tx, row ledger.Row) error { return addRow(tx, p.s.meta.ID, row) }

func (p parent) Execute(ctx context.Context, env tool.Env, c transcript.ToolCall, args string, run func(context.Context, string) tool.Result) tool.Result {
	return hookRunner(p).tool(ctx, env, c, args, run)
}

func (p parent) StoreImage(name string, data []byte, info images.Info) (transcript.ImageRef, error) {
	return storeImage(p.s.cfg.Store, name, data, info)
}

// Emit reports a child's progress as the session's event (see deliver).
func (p parent) Emit(u subagent.Update) {
	s := p.s
	if s.cfg.OnEvent == nil {
		return
	}
	info := u.Info
	s.deliver(Event{Kind: EventKind(u.Kind), Session: s.meta.ID, Time: s.cfg.now(), Step: info.Steps, Subagent: &info,
		Message: u.Message, Index: u.Index, Checklist: u.Checklist, Reason: u.Reason, Err: u.Err})
}
