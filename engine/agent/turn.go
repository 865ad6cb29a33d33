package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Result is how a turn ended.
type Result struct {
	Reason string // one of the Reason constants
	Steps  int    // model requests made
	Answer string // the model's final text, if any
}

// LedgerRow is the stored usage record of one request.
type LedgerRow = ledger.Row

// TurnMeta renders the <turn_meta> block for a turn: the date at day
// granularity, the model and the working set. Within one day and with no
// new paths it is byte-identical.
func TurnMeta(day time.Time, model string, ws *WorkingSet) string {
	return fmt.Sprintf("<turn_meta>\ndate: %s\nmodel: %s\nworking_set: %s\n</turn_meta>",
		day.Format("2006-01-02"), transcript.NeutralizeLine(model), ws.Summary())
}

// Run executes one user turn: it appends text, then alternates model
// requests and tool calls until the model answers without calling a tool,
// the step limit is reached, ctx is cancelled, or an error occurs. Every
// step is committed before the next request. A cancelled turn leaves a
// transcript the API accepts: pending calls get a "cancelled" result.
func (s *Session) Run(ctx context.Context, text string) (Result, error) {
	end, ok := s.beginWork()
	if !ok {
		return Result{}, ErrBusy
	}
	defer end()
	if strings.TrimSpace(text) == "" {
		return Result{}, errors.New("agent: the message is empty; type what you want the agent to do")
	}
	if err := s.workspaceAllowed(); err != nil {
		return Result{Reason: ReasonFailed}, err
	}
	res, err := s.run(ctx, text)
	ev := Event{Kind: EventTurnEnd, Reason: res.Reason, Step: res.Steps}
	if err != nil {
		ev.Err = err.Error()
	}
	s.emit(ev)
	return res, err
}

func (s *Session) run(ctx context.Context, text string) (Result, error) {
	s.emit(Event{Kind: EventTurnStart})
	s.turn = turnState{}
	s.guard.Reset()
	s.st.Breakers.NewTurn()
	if err := s.idleMicroCompact(); err != nil {
		return Result{Reason: ReasonFailed}, err
	}
	now := s.cfg.now()
	n, snap := s.nextTurn(), s.snapshot()
	s.beginTurnCheckpoint(n)
	s.st.WorkingSet.Touch(PathsIn(text)...)
	meta := TurnMeta(now, s.cfg.ModelName, &s.st.WorkingSet)
	user := transcript.UserText(meta, text, now)
	record, turns := s.beginTurnRecord(n, &user, snap)
	prevTurns := s.turns
	s.turns = turns // published with the message
	if err := s.commit([]transcript.Message{user}, record); err != nil {
		s.turns = prevTurns
		return Result{Reason: ReasonFailed}, err
	}
	res := Result{}
	for step := 1; ; step++ {
		if step > s.cfg.MaxSteps {
			res.Reason = ReasonStepLimit
			err := fmt.Errorf("agent: stopped after %d model requests, the per-turn step limit; send another message to continue or raise the limit", s.cfg.MaxSteps)
			s.emit(Event{Kind: EventError, Err: err.Error()})
			return res, err
		}
		res.Steps = step
		s.turn.steps = step
		if err := ctx.Err(); err != nil {
			res.Reason = ReasonCancelled
			return res, nil
		}
		calls, run, answer, err := s.step(ctx, step)
		if err != nil {
			if ctx.Err() != nil {
				res.Reason = ReasonCancelled
				return res, nil
			}
			res.Reason = ReasonFailed
			s.emit(Event{Kind: EventError, Err: err.Error()})
			return res, err
		}
		if len(calls) == 0 {
			res.Reason, res.Answer = ReasonDone, answer
			return res, nil
		}
		stop, err := s.runTools(ctx, step, calls, run)
		s.st.Breakers.ToolRound()
		if err != nil {
			res.Reason = ReasonFailed
			s.emit(Event{Kind: EventError, Err: err.Error()})
			return res, err
		}
		switch stop {
		case ReasonCancelled:
			res.Reason = ReasonCancelled
			return res, nil
		case ReasonHalted:
			res.Reason = ReasonHalted
			return res, fmt.Errorf("agent: %s", s.turn.halt)
		}
	}
}

// step makes one model request and commits the reply, its secrets
// redacted. It returns the tool calls as stored (none means the turn is
// over), the arguments each runs with by call id (see intakeCalls) and the
// reply text as stored.
func (s *Session) step(ctx context.Context, step int) ([]transcript.ToolCall, map[string]string, string, error) {
	if err := s.checkPressure(ctx); err != nil {
		return nil, nil, "", err
	}
	if err := s.carrySubagents(); err != nil {
		return nil, nil, "", err
	}
	req, err := s.nextRequest() // the one request pipeline, see request.go
	if err != nil {
		return nil, nil, "", err
	}
	drift := s.checkDrift()
	logLen := s.log.Len()
	estimate := s.prefixTok + s.log.Tokens() // our own count, kept beside the billed one
	// The screen sees the stream redacted, as the store sees the reply.
	var text, thought streamRedactor
	show := func(d llm.Delta) {
		if d.Content != "" || d.Reasoning != "" {
			s.emit(Event{Kind: EventDelta, Step: step, Delta: &d})
		}
	}
	cb := llm.Callbacks{
		OnDelta: func(d llm.Delta) {
			show(llm.Delta{Content: text.push(d.Content), Reasoning: thought.push(d.Reasoning)})
		},
		OnRetry: func(r llm.Retry) { s.emit(Event{Kind: EventRetry, Step: step, Retry: &r}) },
	}
	resp, err := s.cfg.Model.Stream(ctx, req, cb)
	show(llm.Delta{Content: text.flush(), Reasoning: thought.flush()})
	now := s.cfg.now()
	if err != nil && llm.IsContextLengthExceeded(err) && ctx.Err() == nil {
		if rerr := s.emergency(ctx, err); rerr != nil {
			return nil, nil, "", rerr
		}
		return s.step(ctx, step)
	}
	if err != nil {
		if ctx.Err() != nil && resp != nil && resp.Content != "" {
			// Keep what the user already saw streamed, without its calls.
			content, n := redactText(resp.Content)
			partial := transcript.AssistantReply(content+"\n\n(stopped by the user)", "", nil, now)
			partial.Redacted = n
			_ = s.commit([]transcript.Message{partial}, nil)
		}
		return nil, nil, "", err
	}
	calls, run, redacted := s.intakeCalls(resp.ToolCalls)
	reply, content := intakeReply(resp, calls, redacted, now)
	s.st.Requests++
	s.st.CycleRequests++
	// The first request since the session was opened may meet a cold
	// cache — a new session, or a relaunch after the provider dropped it.
	first := !s.sentSinceOpen
	s.sentSinceOpen = true
	if u := resp.Usage; resp.HasUsage && u.PromptTokens > 0 {
		s.anchor.Set(u.PromptTokens, logLen, estimate)
	}
	row := s.newRow(ledger.KindTurn, resp, len(req.Messages), now)
	row.Request, row.Drift, row.Rebuild = s.st.Requests, drift, s.pendingRebuild
	s.pendingRebuild = ""
	err = s.commit([]transcript.Message{reply}, func(tx *storage.Tx) error {
		row.ContextTokens, _ = s.level()
		return addRow(tx, s.meta.ID, row)
	})
	if err != nil {
		return nil, nil, "", err
	}
	s.emit(Event{Kind: EventUsage, Step: step, Usage: s.usageOf(row, resp, first)})
	return calls, run, content, nil
}

// normalizeArgs makes the stored arguments text safe to send back: empty
// becomes {}, text that is not a JSON object is kept verbatim but wrapped
// so strict servers accept the replayed call, and engine tags are
// neutralised (the replacement keeps valid JSON valid), so replaying the
// call can never open or close an engine block.
func normalizeArgs(a string) string {
	t := strings.TrimSpace(a)
	if t == "" {
		return "{}"
	}
	var v map[string]any
	if json.Unmarshal([]byte(t), &v) == nil {
		return transcript.Neutralize(a)
	}
	b, _ := json.Marshal(map[string]string{"_malformed_arguments": transcript.Neutralize(a)})
	return string(b)
}

// runTools executes calls in order, committing each result, then appends
// any diagnostics for files written. It returns why the turn must stop
// early ("" to go on): ReasonCancelled or ReasonHalted; every call that did
// not run still gets a result, so the transcript stays valid.
func (s *Session) runTools(ctx context.Context, step int, calls []transcript.ToolCall, run map[string]string) (string, error) {
	defer s.dropResults()
	var written []string
	for i, c := range calls {
		if ctx.Err() != nil {
			return ReasonCancelled, s.skipRest(calls[i:], "cancelled: the user stopped the turn before this call ran")
		}
		s.emit(Event{Kind: EventToolStart, Step: step, Call: &c})
		s.turn.toolCalls++
		before := s.checklist.Version()
		res, halt, ran := guarded(s.guard, c, func() tool.Result {
			return s.runCall(ctx, calls, i, runArgs(run, c)) // task calls run as a batch of sub-agents
		}, func() bool { return ctx.Err() != nil })
		if ran && ctx.Err() != nil && res.IsError {
			return ReasonCancelled, s.skipRest(calls[i:], "cancelled: the user stopped the turn before this call finished")
		}
		if v := s.checklist.Version(); ran && v != before && !res.IsError {
			// The checklist tools answer with the list's snapshot, so the
			// model has just read the list as it is now.
			s.turn.shownList = v
		}
		s.st.WorkingSet.Touch(res.Paths...)
		if res.Wrote {
			written = append(written, res.Paths...)
		}
		m := transcript.ToolResult(c, res.Content, res.IsError, s.cfg.now())
		m.Paths = res.Paths
		m.Args = c.Arguments
		m.Redacted = res.Redacted
		if err := s.commit([]transcript.Message{m}, s.saveChecklist()); err != nil {
			return "", err
		}
		if halt != "" {
			s.turn.halt = halt
			if err := s.skipRest(calls[i+1:], "not run: the turn was stopped by the loop guard"); err != nil {
				return "", err
			}
			s.emit(Event{Kind: EventError, Err: halt})
			return ReasonHalted, nil
		}
	}
	return "", s.diagnose(ctx, written)
}

// guarded runs one tool call through the loop guard g, the same way for a
// turn and for every sub-agent: a call the guard blocks does not run and
// gets its message as an error result; one that runs is recorded, and the
// guard's warning, if any, is appended to its result. halt is the
// guard's message when the failures of the tool must end the loop. A call
// that was cut short by cancellation (cancelled reports it after run) is
// not recorded, so a stop is never counted as a failure of the tool.
func guarded(g *guard.Guard, c transcript.ToolCall, run func() tool.Result, cancelled func() bool) (res tool.Result, halt string, ran bool) {
	if v := g.Check(c.Name, c.Arguments); v.Blocked {
		return tool.Result{IsError: true, Content: v.Message}, "", false
	}
	res = run()
	if cancelled() && res.IsError {
		return res, "", true
	}
	out := g.Record(c.Name, res.IsError)
	if out.Message != "" {
		res.Content += "\n\n" + out.Message
	}
	if out.Halt {
		halt = out.Message
	}
	return res, halt, true
}

// execute runs call c with args, the model's own arguments (c holds the
// stored copy), through the gate.
func (s *Session) execute(ctx context.Context, c transcript.ToolCall, args string) tool.Result {
	if res, ok := unusableResult(c); ok {
		return res
	}
	if t, ok := s.tools.Lookup(c.Name); ok {
		v, err := s.gate.Decide(ctx, &s.env, t, c.ID, args)
		if err != nil {
			return tool.Result{IsError: true, Content: "error: approval failed: " + err.Error()}
		}
		if !v.Allowed {
			return v.Refusal
		}
		ctx = v.Ctx
	}
	return s.tools.Run(ctx, &s.env, c.Name, args)
}

// skipRest answers calls that will not run with text, in one commit.
func (s *Session) skipRest(calls []transcript.ToolCall, text string) error {
	if len(calls) == 0 {
		return nil
	}
	return s.commit(notRun(calls, text, s.cfg.now()), nil)
}

// notRun returns the results of calls that will not run, each saying text,
// so a stored transcript stays one a strict server accepts. A turn and
// every sub-agent answer skipped calls with it.
func notRun(calls []transcript.ToolCall, text string, at time.Time) []transcript.Message {
	msgs := make([]transcript.Message, 0, len(calls))
	for _, c := range calls {
		m := transcript.ToolResult(c, text, true, at)
		m.Kind = transcript.KindRepair
		msgs = append(msgs, m)
	}
	return msgs
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
