package ui

import (
	"fmt"
	"slices"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Event dispatch: the engine's events, approvals and costs applied to the
// panels on the UI goroutine.

// onEvent applies one engine event on the UI goroutine.
func (u *UI) onEvent(live *liveSession, e agent.Event) {
	u.fleet.Event(live.id, live.sess, e) // shown or not
	if e.Kind == agent.EventForm || e.Kind == agent.EventFormDone {
		u.onForm(live, e) // a hidden session's form waits for it to be shown
		return
	}
	if u.live != live {
		return
	}
	switch e.Kind {
	case agent.EventTurnStart:
		u.setRunning(1)
	case agent.EventTurnEnd:
		u.noteServerFailures(live)
	case agent.EventDelta:
		u.footer.ClearRetry()
		u.chat.Delta(e.Delta.Content, e.Delta.Reasoning)
	case agent.EventMessage:
		u.chat.Commit(e.Message, e.Index)
	case agent.EventToolStart:
		u.chat.ToolStarted(e.Call.ID)
		u.runningTool(live, e.Step, *e.Call)
	case agent.EventChecklist:
		u.side.checklist.SetItems(e.Checklist)
	case agent.EventDrift:
		// The chart marks the drift from the next request's row.
		if d := e.Drift; d != nil && d.Changed && !d.Booked {
			u.footer.State.Drift = tw.DriftAlert(*d)
			u.footer.Update()
		}
	case agent.EventCompactionSoon:
		if e.Notice != nil {
			u.head.notice.Announce(*e.Notice)
			// The notice names the level as it stands now; the gauge says
			// the same number, not the last request's.
			u.side.gauge.SetLevel(e.Notice.Level, live.info.window, false)
		}
	case agent.EventRebuild:
		if e.Rebuild != nil {
			u.head.notice.Hide() // the compaction it announced, or a rewrite that makes it moot
			if e.Rebuild.Kind == rewrite.Rewind {
				// The chat is read again once the rewind returns; until
				// then the row says what happened, not "compacted".
				n, _ := chat.RewindTurn(e.Rebuild.Reason)
				u.chat.AppendItems(chat.RewindItem(n, 0, false, nil, 0))
			} else {
				u.showRebuild(*e.Rebuild)
			}
			live.job.cycled = live.job.cycled || e.Rebuild.Kind == rewrite.Cycle
			u.side.gauge.SetLevel(e.Rebuild.TokensAfter, live.info.window, false)
		}
	case agent.EventUsage:
		u.onUsage(live, e.Step, *e.Usage)
	case agent.EventRetry:
		if e.Retry.Fallback != "" {
			u.onFallback(e.Retry.Fallback, e.Retry.Reason)
			break
		}
		u.footer.StartRetry(e.Retry.Wait, e.Retry.Attempt, e.Retry.MaxAttempts)
	case agent.EventError:
		u.chat.DropStreaming()
	case agent.EventSubagentStart, agent.EventSubagentStep, agent.EventSubagentChecklist, agent.EventSubagentEnd:
		u.onChild(e)
	case agent.EventMCP:
		if live.sess != nil {
			u.showMCP(live, live.sess.MCP().Status(), e.Err)
		}
	case agent.EventHook:
		u.onHook(live, e)
	}
}

// onUsage shows what a response cost. The engine's usage event carries
// the ledger row it committed; that row goes to the chart as it is, and
// the footer's cost and the chip's session ratio come from the ledger over
// the session's rows, so nothing here counts on its own.
func (u *UI) onUsage(live *liveSession, step int, us agent.Usage) {
	row := us.Row
	live.rows = append(live.rows, row)
	u.footer.ClearRetry()
	u.side.chart.SetWindow(us.Window)
	u.side.chart.Add(row)
	u.showTotals(live)
	if live.sess != nil {
		u.showMCPLine(live.sess.MCP().Status()) // the tools this request's catalog sent
	}
	if us.WarmUp {
		u.footer.State.WarmUp = u.warmUpText(row)
		u.footer.Update()
		return
	}
	u.side.gauge.SetLevel(row.ContextTokens, us.Window, us.Exact)
	if us.CompactAt > 0 {
		u.setThresholds(live, us.CompactAt, us.CycleAt) // the budget moves the compaction mark
	}
	u.chat.NoteNextRequest(row)
	u.side.chip.Set(row, us.First)
	u.footer.State.LastDuration = rowDuration(row)
	u.footer.State.Fallback = fellBack(row, us.Model)
	u.footer.State.Run = tw.Running(step, maxSteps, "")
	u.footer.Update()
}

// rowDuration is how long a row's request took.
func rowDuration(r ledger.Row) time.Duration { return time.Duration(r.DurationMS) * time.Millisecond }

// showApproval puts the Approve / Deny / Always buttons on the call's card.
func (u *UI) showApproval(live *liveSession, p *chat.Approval) {
	if !slices.Contains(live.waits.approvals, p) {
		live.waits.approvals = append(live.waits.approvals, p)
	}
	u.notify("Approval needed", fmt.Sprintf("%s wants to run %s.", u.sessions.title(live.id), p.Req.Tool), live)
	u.sessions.badges()
	if u.live != live {
		return // hidden: the request waits on the session until it is shown
	}
	it := u.chat.ByCall[p.Req.CallID]
	if it == nil {
		it = &chat.Item{Kind: chat.ItemTool, Call: chat.ToolCallOf(p.Req), Title: p.Req.Summary,
			ArgsText: chat.ArgsDisplay(p.Req.Tool, p.Req.Arguments)}
		u.chat.ByCall[p.Req.CallID] = it
		u.chat.AppendItems(it)
	}
	it.Approval = p
	it.Status = chat.ToolWaiting
	u.chat.RefreshItem(it)
	u.chat.ToBottom()
	u.footer.State.Run = tw.RunState{Phase: tw.RunWaitingApproval}
	u.footer.Update()
}

// dropWaiting takes p off live's waiting approvals and redraws the badges.
func (u *UI) dropWaiting(live *liveSession, p *chat.Approval) {
	if live == nil {
		return
	}
	if i := slices.Index(live.waits.approvals, p); i >= 0 {
		live.waits.approvals = slices.Delete(live.waits.approvals, i, i+1)
		u.sessions.badges()
	}
}

func (u *UI) withdrawApproval(live *liveSession, p *chat.Approval) {
	u.dropWaiting(live, p)
	if u.live != live {
		return
	}
	it := u.chat.ByCall[p.Req.CallID]
	if it == nil || it.Approval != p {
		return
	}
	it.Approval = nil
	it.Status = chat.ToolStopped
	u.chat.RefreshItem(it)
}

// decide answers a pending approval from its card.
func (u *UI) decide(it *chat.Item, d tool.Decision) {
	p := it.Approval
	if p == nil {
		return
	}
	it.Approval = nil
	u.dropWaiting(u.live, p)
	switch n, all := tw.Ticked(p.Accepted), len(p.Accepted); {
	case d == tool.Approve && all > 1 && n < all:
		it.Decided, it.Status = fmt.Sprintf("Approved %d of %d changes by you; the model is told which were not applied", n, all), chat.ToolRunning
	case d == tool.Approve:
		it.Decided, it.Status = "Approved by you", chat.ToolRunning
	case d == tool.ApproveAlways:
		it.Decided, it.Status = "Approved — "+it.Call.Name+" is allowed for the rest of this session (revoke under Rules)", chat.ToolRunning
	default:
		it.Decided, it.Status = "Denied by you; the model was told", chat.ToolDenied
	}
	u.chat.RefreshItem(it)
	p.Answer(d)
	if u.live != nil && u.live.job.running {
		u.runningTool(u.live, 0, it.Call)
	}
}

// showRebuild adds the chat row of a log rewrite: "compacted: 84.2k →
// 21.0k tokens" with the summary expandable, or the start of a new cycle
// with its hand-off brief.
func (u *UI) showRebuild(info rewrite.Info) {
	it := chat.RebuildItem(info)
	u.chat.AppendItems(it)
	u.chat.AwaitNext = it
}
