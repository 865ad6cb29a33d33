package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/internal/workspace"
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
func TurnMeta(day time.Time, model string, ws *status.WorkingSet) string {
	return fmt.Sprintf("<turn_meta>\ndate: %s\nmodel: %s\nworking_set: %s\n</turn_meta>",
		day.Format("2006-01-02"), transcript.NeutralizeLine(model), ws.Summary())
}

// Run executes one user turn: it appends text (a slash command in it
// expanded and its "@server:uri" resources attached; a command that
// cannot be expanded fails with a *CommandError before anything is
// appended), then alternates model requests and tool calls until the
// model answers without calling a tool, the step limit is reached, ctx is
// cancelled, or an error occurs. Every step is committed before the next
// request. A cancelled turn leaves a transcript the API accepts: pending
// calls get a "cancelled" result.
func (s *Session) Run(ctx context.Context, text string) (Result, error) {
	return s.RunWithImages(ctx, text, nil)
}

// RunWithImages is Run with pictures attached to the message, after its
// text (see images.go): the text may then be empty. Images the session's
// model does not accept, or that are not images within the limits, fail
// with an *images.Error before anything is stored or sent.
func (s *Session) RunWithImages(ctx context.Context, text string, imgs []images.Input) (Result, error) {
	end, ok := s.beginWork()
	if !ok {
		return Result{}, ErrBusy
	}
	defer end()
	s.skills.Refresh() // a skill added since the last turn is named in its status blocks
	if strings.TrimSpace(text) == "" && len(imgs) == 0 {
		return Result{}, errors.New("the message is empty; type what you want the agent to do")
	}
	infos, err := images.CheckAll(s.model().Vision, s.model().ModelName, imgs)
	if err != nil {
		return Result{Reason: step.ReasonFailed}, err
	}
	// A session created before the workspace rule, or by an older Tally,
	// may name a folder the rule refuses: it runs no turn.
	if err := workspace.Protected(s.meta.Workspace, s.cfg.dataDir()); err != nil {
		return Result{Reason: step.ReasonFailed}, err
	}
	t := &turnLoop{s: s}
	in, err := t.prepareMessage(ctx, text) // its slash command and attachments
	if err != nil {
		return Result{Reason: step.ReasonFailed}, err
	}
	if in, err = (hookRunner{s}).prompt(ctx, in); err != nil {
		return Result{Reason: step.ReasonFailed}, err
	}
	pics, err := storeImages(s.cfg.Store, imgs, infos)
	if err != nil {
		return Result{Reason: step.ReasonFailed}, err
	}
	in.blocks = append(in.blocks, pics...)
	res, err := t.run(ctx, in)
	ev := Event{Kind: EventTurnEnd, Reason: res.Reason, Step: res.Steps}
	if err != nil {
		ev.Err = err.Error()
	}
	s.emit(ev)
	s.events.Flush() // every event of the turn is delivered when Run returns
	return res, err
}

func (t *turnLoop) run(ctx context.Context, in prepared) (Result, error) {
	s := t.s
	s.emit(Event{Kind: EventTurnStart})
	s.turn = turnState{}
	s.rw.NewTurn()
	s.guard.Reset()
	s.st.Breakers.NewTurn()
	if err := s.rw.IdleMicro(); err != nil {
		return Result{Reason: step.ReasonFailed}, err
	}
	now := s.cfg.now()
	list, _ := s.checklist.MarshalJSON()
	n, snap := s.turns.Next(), rewind.Snapshot{Checklist: list, WorkingSet: append([]string(nil), s.st.WorkingSet.Paths...)}
	s.turns.BeginTurn(n)
	s.st.WorkingSet.Touch(status.PathsIn(in.text)...)
	meta := TurnMeta(now, s.model().ModelName, &s.st.WorkingSet)
	user := in.message(meta, now)
	record, undo := s.turns.Begin(n, s.meta.Cycle, &user, snap) // published with the message
	if err := s.commit([]transcript.Message{user}, t.titleFirstTurn(n, in.typed, record)); err != nil {
		undo()
		return Result{Reason: step.ReasonFailed}, err
	}
	end := t.runTurn(ctx) // the step loop, again while a Stop hook asks
	res := Result{Reason: end.Reason, Steps: end.Steps}
	switch end.Reason {
	case step.ReasonDone:
		res.Answer = end.Answer
	case step.ReasonCancelled:
		return res, nil
	case step.ReasonHalted:
		s.turn.halt = end.Halt
		s.emit(Event{Kind: EventError, Err: end.Halt})
		return res, fmt.Errorf("%s", end.Halt)
	}
	if end.Err != nil {
		if ctx.Err() != nil && end.Reason == step.ReasonFailed {
			res.Reason = step.ReasonCancelled
			return res, nil
		}
		s.emit(Event{Kind: EventError, Err: end.Err.Error()})
	}
	return res, end.Err
}

// titleLimit is the most characters of a first prompt a session's title
// keeps.
const titleLimit = 60

// titleFirstTurn wraps the commit of turn n's message so that the first
// prompt of a session still carrying its placeholder title (the
// workspace's folder name or the session's ID) becomes its title, in the
// same transaction; a title the user chose is kept.
func (t *turnLoop) titleFirstTurn(n int, prompt string, then func(*storage.Tx) error) func(*storage.Tx) error {
	s := t.s
	if n != 1 {
		return then
	}
	return func(tx *storage.Tx) error {
		if then != nil {
			if err := then(tx); err != nil {
				return err
			}
		}
		cur, err := tx.Session(s.meta.ID)
		if err != nil || (cur.Title != filepath.Base(cur.Workspace) && cur.Title != cur.ID) {
			return nil
		}
		title := text.OneLine(prompt, titleLimit)
		if title == "" {
			return nil
		}
		cur.Title = title
		return tx.PutSession(cur)
	}
}

// turnLoop is the user's turn as a conversation of the step loop: the
// session's log, registry, system prompt and per-turn step limit.
type turnLoop struct {
	s          *Session
	sent       sending         // what the request in flight measured
	listBefore int             // the checklist's version before the running call
	held       step.HeldImages // the step's pictures, attached after its results (see images.go)
}

func (t *turnLoop) Begin(n int) (string, error) {
	s := t.s
	if n > s.cfg.MaxSteps {
		return step.ReasonStepLimit, fmt.Errorf("stopped after %d model requests, the per-turn step limit; send another message to continue or raise the limit", s.cfg.MaxSteps)
	}
	s.turn.steps = n
	return "", nil
}

func (t *turnLoop) Intake(in []llm.ToolCall) ([]transcript.ToolCall, map[string]string, int) {
	return t.intakeCalls(in)
}

func (t *turnLoop) BeforeCalls(int, []transcript.ToolCall) (string, error) {
	t.s.st.Breakers.ToolRound()
	t.s.subs.DropResults()
	return "", nil
}

func (t *turnLoop) LoopGuard() *guard.Guard { return t.s.guard }

func (t *turnLoop) StartCall(step int, call transcript.ToolCall) {
	t.s.emit(Event{Kind: EventToolStart, Step: step, Call: &call})
	t.s.events.Flush() // the host has seen the call before it runs (Files.Preview)
	t.s.turn.toolCalls++
	t.listBefore = t.s.checklist.Version()
}

func (t *turnLoop) Execute(ctx context.Context, calls []transcript.ToolCall, i int, args string) tool.Result {
	t.s.lsp.BeforeEdit(ctx, calls[i], args)
	if calls[i].Name == subagent.TaskToolName && !t.s.cfg.Subagents.Off {
		return t.s.subs.RunCall(ctx, calls, i) // task calls run as a batch of sub-agents
	}
	return t.execute(ctx, calls[i], args)
}

func (t *turnLoop) CommitResult(c transcript.ToolCall, res tool.Result) error {
	s := t.s
	if v := s.checklist.Version(); v != t.listBefore && !res.IsError {
		// The checklist tools answer with the list's snapshot, so the
		// model has just read the list as it is now.
		s.turn.shownList = v
	}
	s.st.WorkingSet.Touch(res.Paths...)
	s.lsp.Touched(c, res)
	m := transcript.ToolResult(c, res.Content, res.IsError, s.cfg.now())
	m.Paths = res.Paths
	m.Args = c.Arguments
	m.Redacted = res.Redacted
	if err := s.commit([]transcript.Message{m}, s.saveChecklist()); err != nil {
		return err
	}
	return t.held.Hold(parent{s}.StoreImage, c, res) // the one way a step stores a picture, the turn's and a child's
}

func (t *turnLoop) Skip(calls []transcript.ToolCall, text string) error {
	if err := t.skipRest(calls, text); err != nil {
		return err
	}
	return t.attachHeld(&t.held)
}

func (t *turnLoop) EndRound(ctx context.Context, written []string) error {
	t.s.subs.DropResults()
	if err := t.attachHeld(&t.held); err != nil {
		return err
	}
	return t.diagnose(ctx, written)
}

func (*turnLoop) Words() step.SkipWords {
	return step.SkipWords{
		CancelledBefore: "cancelled: the user stopped the turn before this call ran",
		CancelledDuring: "cancelled: the user stopped the turn before this call finished",
		Halted:          "not run: the turn was stopped by the loop guard",
	}
}

// Send makes the step's model request: it relieves context pressure,
// carries finished sub-agents' results, builds the one request (see
// request.go) and streams it, the screen seeing the stream redacted as the
// store sees the reply. A "context length exceeded" is recovered from and
// sent again; a stopped stream keeps what the user already saw.
func (t *turnLoop) Send(ctx context.Context, n int) (*llm.Response, error) {
	s := t.s
	if err := s.rw.BeforeRequest(ctx); err != nil {
		return nil, err
	}
	if err := t.carrySubagents(); err != nil {
		return nil, err
	}
	req, err := t.nextRequest() // the one request pipeline, see request.go
	if err != nil {
		return nil, err
	}
	t.sent = sending{drift: t.checkDrift(), logLen: s.log.Len(), messages: len(req.Messages),
		estimate: s.prefixTok + s.log.Tokens()} // our own count, kept beside the billed one
	var text, thought secrets.Stream
	show := func(d llm.Delta) {
		if d.Content != "" || d.Reasoning != "" {
			s.emit(Event{Kind: EventDelta, Step: n, Delta: &d})
		}
	}
	cb := llm.Callbacks{
		OnDelta: func(d llm.Delta) {
			show(llm.Delta{Content: text.Push(d.Content), Reasoning: thought.Push(d.Reasoning)})
		},
		OnRetry: func(r llm.Retry) { s.emit(Event{Kind: EventRetry, Step: n, Retry: &r}) },
	}
	m := s.model()
	resp, err := m.Model.Stream(ctx, m.keyed(s.meta.ID, ledger.KindTurn, req), cb)
	show(llm.Delta{Content: text.Flush(), Reasoning: thought.Flush()})
	if err != nil && llm.IsContextLengthExceeded(err) && ctx.Err() == nil {
		if rerr := s.rw.Emergency(ctx, err); rerr != nil {
			return nil, rerr
		}
		return t.Send(ctx, n)
	}
	if err != nil {
		if ctx.Err() != nil && resp != nil && resp.Content != "" {
			// Keep what the user already saw streamed, without its calls.
			_ = s.commit([]transcript.Message{step.Partial(ctx, resp.Content, s.cfg.now())}, nil)
		}
		return nil, err
	}
	return resp, nil
}

// sending is what send measured of the request in flight, for the ledger
// row and the usage anchor of its reply.
type sending struct {
	drift    *prompt.Drift
	logLen   int // the log's length when the request was built
	messages int // messages in the request
	estimate int // our own count of the request's tokens
}

// CommitReply stores the reply with the one ledger row of its response
// and reports the usage.
func (t *turnLoop) CommitReply(step int, resp *llm.Response, reply transcript.Message) error {
	s, sent := t.s, t.sent
	now := s.cfg.now()
	s.st.Requests++
	s.st.CycleRequests++
	// The first request since the session was opened may meet a cold
	// cache — a new session, or a relaunch after the provider dropped it.
	first := !s.sentSinceOpen
	s.sentSinceOpen = true
	if u := resp.Usage; resp.HasUsage && u.PromptTokens > 0 {
		s.anchor.Set(u.PromptTokens, sent.logLen, sent.estimate)
		s.st.Calibration = nil
	}
	row := s.newRow(ledger.KindTurn, resp, sent.messages, now)
	row.Request, row.Drift, row.Rebuild, row.Repin = s.st.Requests, sent.drift, s.pendingRebuild, s.st.Repin
	s.pendingRebuild, s.st.Repin = "", ""
	err := s.commit([]transcript.Message{reply}, func(tx *storage.Tx) error {
		row.ContextTokens, _ = s.level()
		return addRow(tx, s.meta.ID, row)
	})
	if err != nil {
		return err
	}
	s.emit(Event{Kind: EventUsage, Step: step, Usage: s.usageOf(row, resp, first)})
	return nil
}

// executeGated runs call c with args, the model's own arguments (c holds
// the stored copy), through the gate.
func (t *turnLoop) executeGated(ctx context.Context, c transcript.ToolCall, args string) tool.Result {
	s := t.s
	if res, ok := step.Unusable(c); ok {
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
func (t *turnLoop) skipRest(calls []transcript.ToolCall, text string) error {
	s := t.s
	if len(calls) == 0 {
		return nil
	}
	return s.commit(step.NotRun(calls, text, s.cfg.now()), nil)
}
