package subagent

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/assets"
	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// child is one running sub-agent. Its loop runs on its own goroutine and
// touches nothing of the parent but the shared gate, store, model and
// event sink, so several run at once while the parent waits.
type child struct {
	h      *Hub
	p      Parent
	ctx    context.Context
	cancel context.CancelFunc
	params TaskParams
	parent string // the parent session's ID

	log     *transcript.AppendLog
	reg     *tool.Registry
	list    *todo.List
	env     tool.Env
	req     step.Requester // the child's prefix, skeleton and request steps
	read    map[string]bool
	listVer int
	model   string // a custom kind's model; "" is the session's
	// guard is the child's own loop guard, with the parent's rules: the
	// third identical call is blocked and a tool that keeps failing ends
	// the child.
	guard *guard.Guard
	held  step.HeldImages // the step's pictures, attached after its results
	// dedupeMin is the size from which a tool result is also kept in the
	// blob store, so the log's reference to it can be paged back.
	dedupeMin int
	// system and catalog are the child's prefix, prefixTok its cost (see
	// relieve); stored counts the messages of its stored transcript, which
	// keeps every message when a compaction rewrites the log; fullNote
	// says why a child whose context is full stopped.
	system    string
	catalog   []chat.Tool
	prefixTok int
	section   string        // the summary section merged into the prompt (see summarise)
	anchor    tokens.Anchor // the provider's count of the last request (see level)
	stored    int
	fullNote  string

	info Info // guarded by h.mu
}

// Prompt is the system prompt of a built-in kind: the kind's fixed text and
// the environment section, the same bytes for every child of that kind in
// the workspace.
func Prompt(kind, workspace string) string {
	text := assets.SubagentExplore
	if kind == General {
		text = assets.SubagentGeneral
	}
	return strings.TrimSpace(text) + "\n\n" + childEnvironment(workspace)
}

// childEnvironment is the environment section of every sub-agent's
// prompt.
func childEnvironment(workspace string) string {
	return fmt.Sprintf("# Environment\nworkspace: %s\nplatform: %s/%s\nAll file paths in tool calls are relative to the workspace.",
		workspace, runtime.GOOS, runtime.GOARCH)
}

// subagentTools returns the registry of a kind: read_file, list_dir, grep,
// retrieve_tool_result and the checklist for every child, and the tools
// that write for a general one.
func (h *Hub) subagentTools(kind string, list *todo.List) *tool.Registry {
	reg := tool.NewRegistry()
	reg.AddBuiltin(tool.ReadFile())
	reg.AddBuiltin(tool.ListDir())
	reg.AddBuiltin(tool.Grep())
	reg.AddBuiltin(tool.RetrieveToolResult(h.p.Store().LoadBlob))
	for _, t := range todo.Tools(list) {
		reg.AddBuiltin(t)
	}
	for name, target := range todo.Aliases {
		reg.Alias(name, target)
	}
	if kind == General {
		reg.AddBuiltin(tool.WriteFile())
		reg.AddBuiltin(tool.EditFile())
		reg.AddBuiltin(tool.RunShell())
	}
	return reg
}

// ToolNames are the names of the tools a child of the built-in kind has.
func (h *Hub) ToolNames(kind string) []string { return h.subagentTools(kind, todo.New()).Names() }

// newChild prepares the child of a task call and stores its first message
// (the job). It returns nil and the result for the model when the call
// cannot start one.
func (h *Hub) newChild(ctx context.Context, c transcript.ToolCall) (*child, tool.Result) {
	p := h.p
	tp, custom, bad := h.parseTask(c)
	if bad != nil {
		return nil, *bad
	}
	id, err := h.nextChildID()
	if err != nil {
		return nil, tool.Result{IsError: true, Content: "task: " + err.Error()}
	}
	ch := &child{h: h, p: p, params: tp, parent: p.ID(), read: map[string]bool{}, list: todo.New(), guard: guard.New()}
	ch.ctx, ch.cancel = context.WithCancel(ctx)
	rules := p.WireRules()
	ch.log, ch.dedupeMin = transcript.NewAppendLog(nil, rules), rules.DedupeMin
	prompt, steps := Prompt(tp.Kind, p.Workspace()), h.cfg.maxSteps()
	if custom == nil {
		ch.reg = h.subagentTools(tp.Kind, ch.list)
	} else {
		ch.reg, prompt, ch.model = h.customTools(*custom, ch.list), customPrompt(*custom, p.Workspace()), custom.Model
		if custom.MaxSteps > 0 {
			steps = custom.MaxSteps
		}
	}
	ch.env = p.Env() // the parent's confinement, sandbox and recorder
	ch.req.Log = ch.log
	ch.system, ch.catalog = prompt, step.Tools(ch.reg.Catalog())
	ch.prefixTok = prefixTokens(prompt, ch.req.SetPrefix(ch.system, ch.catalog))
	ch.info = Info{ID: id, CallID: c.ID, Title: tp.Description, Kind: tp.Kind, Status: Running,
		Cycle: p.Cycle(), MaxSteps: steps, Started: p.Now()}
	return ch, tool.Result{}
}

// snapshot returns a copy of the child's info; the caller holds h.mu.
func (c *child) snapshot() Info {
	info := c.info
	info.Checklist = append([]todo.Item(nil), info.Checklist...)
	return info
}

// update changes the child's info under the lock and returns a copy.
func (c *child) update(f func(*Info)) Info {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	f(&c.info)
	return c.snapshot()
}

func (c *child) stop() { c.cancel() }

// emit reports a child's progress to the parent.
func (c *child) emit(kind string, info Info, f func(*Update)) {
	u := Update{Kind: kind, Info: info}
	if f != nil {
		f(&u)
	}
	c.p.Emit(u)
}

// runSafely runs the child and turns its end into the parent's result. A
// panic in the loop ends the child as failed, never the parent.
func (c *child) runSafely() (res tool.Result) {
	c.h.mu.Lock()
	if c.h.running == nil {
		c.h.running = map[string]*child{}
	}
	c.h.running[c.info.ID] = c
	c.h.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			res = c.finish(step.ReasonFailed, "", fmt.Errorf("the sub-agent crashed (%v)", p))
		}
		c.cancel()
		c.h.mu.Lock()
		delete(c.h.running, c.info.ID)
		c.h.mu.Unlock()
	}()
	info := c.update(func(*Info) {})
	job := transcript.UserText("", "# Task: "+c.params.Description+"\n\n"+c.params.Prompt, info.Started)
	if err := c.start(job); err != nil {
		return c.finish(step.ReasonFailed, "", err)
	}
	c.emit(UpdateStart, info, nil)
	c.emit(UpdateMessage, c.update(func(*Info) {}), func(u *Update) { m := job.Clone(); u.Message = &m })
	reason, report, err := c.loop()
	return c.finish(reason, report, err)
}

// loop runs the child through the step loop until it answers without a
// call, its budget is spent, the loop guard stops it, ctx ends or a
// request fails. It returns how it ended and the report.
func (c *child) loop() (reason, report string, err error) {
	end := step.Run(c.ctx, c, c.p.Now)
	if end.Reason == ReasonContextFull {
		return end.Reason, c.lastAnswer(), nil
	}
	return end.Reason, end.Answer, end.Err
}

// Begin tells the child, on its last step, to report instead of calling
// more tools.
func (c *child) Begin(step int) (string, error) {
	if reason, err := c.relieve(); reason != "" || err != nil {
		return reason, err
	}
	if budget := c.info.MaxSteps; step == budget {
		note := fmt.Sprintf("<system-reminder>This is your last step (%d of %d): do not call any tool; write your final report now.</system-reminder>", step, budget)
		if err := c.commit(transcript.Injected(transcript.KindReminder, note, c.p.Now()), nil); err != nil {
			return "", err
		}
	}
	return "", nil
}

// Send streams the child's next request to the sub-agents' model (see
// roleModel).
func (c *child) Send(ctx context.Context, _ int) (*llm.Response, error) {
	return c.p.Send(ctx, c.request())
}

// CommitReply stores the reply with the one ledger row of its response
// and reports the child's step.
func (c *child) CommitReply(step int, resp *llm.Response, reply transcript.Message) error {
	row := c.p.Row(resp, c.log.Len()+1)
	row.Subagent = c.info.ID
	if c.model != "" {
		row.Model = c.model // the custom agent's own model
	}
	u := resp.Usage
	if u.PromptTokens > 0 {
		c.anchor.Set(u.PromptTokens, c.log.Len(), c.level()) // the log as it was sent
	}
	c.update(func(i *Info) {
		i.Steps, i.ContextTokens = step, u.PromptTokens
		i.PromptTokens += u.PromptTokens
		i.CompletionTokens += u.CompletionTokens
	})
	if err := c.commit(reply, &row); err != nil {
		return err
	}
	c.emit(UpdateStep, c.update(func(*Info) {}), nil)
	return nil
}

// BeforeCalls ends the child when a reply on its last step still calls
// tools: they are answered, not run.
func (c *child) BeforeCalls(n int, calls []transcript.ToolCall) (string, error) {
	if n >= c.info.MaxSteps {
		return step.ReasonStepLimit, c.Skip(calls, "not run: the sub-agent's step budget is spent")
	}
	return "", nil
}

func (c *child) LoopGuard() *guard.Guard                  { return c.guard }
func (c *child) StartCall(int, transcript.ToolCall)       {}
func (c *child) EndRound(context.Context, []string) error { return c.attachHeld() }

func (c *child) Words() step.SkipWords {
	return step.SkipWords{
		CancelledBefore: "cancelled: the sub-agent was stopped before this call ran",
		CancelledDuring: "cancelled: the sub-agent was stopped before this call finished",
		Halted:          "not run: the sub-agent was stopped by the loop guard",
	}
}

// CommitResult stores the result of one of the child's calls and notes
// what it read.
func (c *child) CommitResult(call transcript.ToolCall, res tool.Result) error {
	m := transcript.ToolResult(call, res.Content, res.IsError, c.p.Now())
	m.Paths, m.Args, m.Redacted = res.Paths, call.Arguments, res.Redacted
	if err := c.commit(m, nil); err != nil {
		return err
	}
	c.noteResult(call, res)
	return c.held.Hold(c.p.StoreImage, call, res)
}

// request is the child's next request, built by the same steps as the
// turn's (see step.Steps): its system prompt and catalog, its log's wire
// messages, and no status block.
func (c *child) request() llm.Request {
	model := c.p.Model()
	if c.model != "" {
		model = c.model
	}
	return c.req.Assemble(model, "")
}

// Intake gives the calls of one reply ids unique in the child's log and
// replayable, redacted names and arguments, by the rules of the parent's
// intakeCalls, and returns the arguments each runs with.
func (c *child) Intake(in []llm.ToolCall) ([]transcript.ToolCall, map[string]string, int) {
	return step.IntakeCalls(in, step.IDsOf(c.log), strings.ReplaceAll(c.info.ID, "-", "_")+"_call")
}

// executeGated runs one of the child's calls with args, the model's own
// arguments: only tools of its own registry, each through the parent's
// gate, so the parent's mode, rules and approver decide every call that
// needs approval.
func (c *child) executeGated(ctx context.Context, calls []transcript.ToolCall, i int, args string) tool.Result {
	call := calls[i]
	if res, ok := step.Unusable(call); ok {
		return res
	}
	t, ok := c.reg.Lookup(call.Name)
	if !ok {
		return tool.Result{IsError: true, Content: fmt.Sprintf("error: a %s sub-agent has no tool %q; use one of: %s", c.info.Kind, text.Clip(call.Name, 80), strings.Join(c.reg.Names(), ", "))}
	}
	v, err := c.p.Gate().Decide(ctx, &c.env, t, call.ID, args)
	if err != nil {
		return tool.Result{IsError: true, Content: "error: approval failed: " + err.Error()}
	}
	if !v.Allowed {
		return v.Refusal
	}
	return c.reg.Run(v.Ctx, &c.env, call.Name, args)
}

// noteResult counts the files a result read and reports a checklist change.
func (c *child) noteResult(call transcript.ToolCall, res tool.Result) {
	info := c.update(func(i *Info) {
		if call.Name == "read_file" && !res.IsError {
			for _, p := range res.Paths {
				c.read[p] = true
			}
			i.FilesRead = len(c.read)
		}
		i.Checklist = c.list.Items()
	})
	if v := c.list.Version(); v != c.listVer {
		c.listVer = v
		c.emit(UpdateChecklist, info, func(u *Update) { u.Checklist = info.Checklist })
	}
}

// Skip answers calls that will not run, so the stored transcript stays
// one a strict server accepts.
func (c *child) Skip(calls []transcript.ToolCall, text string) error {
	for _, m := range step.NotRun(calls, text, c.p.Now()) {
		if err := c.commit(m, nil); err != nil {
			return err
		}
	}
	return c.attachHeld()
}

// finish records how the child ended, stores its report and returns the
// parent's result: the report, redacted and capped, in an envelope saying
// how much work it took. The report is redacted here, where it enters the
// parent's conversation, the blob store and the child's index entry,
// whatever the child's own intake did.
func (c *child) finish(reason, report string, err error) tool.Result {
	report, redacted := secrets.Count(strings.TrimSpace(report))
	capped, n := capTokens(report, c.h.cfg.reportCap())
	sha := ""
	if report != "" {
		sha, _ = c.p.Store().PutBlob([]byte(report))
	}
	info := c.update(func(i *Info) {
		i.Status, i.Ended, i.Checklist = reason, c.p.Now(), c.list.Items()
		i.ReportTokens, i.ReportSHA, i.ReportHead = tokens.Count(capped), sha, text.FirstLine(report, 200)
		if err != nil {
			i.Error = err.Error()
		}
	})
	_ = c.h.saveChild(info) // the transcript is stored; a lost index entry shows as running
	c.emit(UpdateEnd, info, func(u *Update) { u.Reason, u.Err = reason, info.Error })

	head := fmt.Sprintf("[sub-agent %s · %s · %s · %d of %d steps · %s tokens · %d files read]",
		info.ID, info.Kind, reason, info.Steps, info.MaxSteps, text.Thousands(info.Tokens()), info.FilesRead)
	switch reason {
	case step.ReasonCancelled:
		return tool.Result{IsError: true, Content: head + "\ncancelled: the sub-agent was stopped before it reported; its transcript is kept for the user. Do not start it again unless the user asks."}
	case step.ReasonFailed:
		return tool.Result{IsError: true, Content: head + "\nfailed: " + info.Error + "; retry the task once, or do the job yourself."}
	}
	if capped == "" {
		capped = "(the sub-agent wrote no report)"
	}
	switch reason {
	case step.ReasonStepLimit:
		head += "\nThe sub-agent spent its step budget; this is what it had when it stopped."
	case step.ReasonHalted:
		head += "\nThe loop guard stopped the sub-agent because a tool kept failing; this is what it had when it stopped."
	case ReasonContextFull:
		head += "\n" + c.fullNote
	}
	if n > 0 {
		capped += fmt.Sprintf("\n\n(report cut at %s of %s tokens; retrieve_tool_result with sha %s pages the whole report)", text.Thousands(c.h.cfg.reportCap()), text.Thousands(n), sha)
	}
	return tool.Result{Content: head + "\n\n" + capped, Redacted: redacted}
}

// capTokens cuts s to at most limit tokens on a rune boundary, returning
// the cut text and s's size when it was cut (0 when it fit).
func capTokens(s string, limit int) (string, int) {
	n := tokens.Count(s)
	if n <= limit {
		return s, 0
	}
	cut := s
	for tokens.Count(cut) > limit {
		end := len(cut) * limit / (tokens.Count(cut) + 1)
		for end > 0 && !utf8.RuneStart(cut[end]) {
			end--
		}
		cut = cut[:end]
	}
	return cut, n
}

// attachHeld commits the child's held pictures, if any, after the step's
// results.
func (c *child) attachHeld() error {
	for _, m := range c.held.Take(c.p.Now()) {
		if err := c.commit(m, nil); err != nil {
			return err
		}
	}
	return nil
}

// Execute runs one of the child's calls with args through the parent's
// PreToolUse and PostToolUse hooks, then the parent's gate (see
// executeGated).
func (c *child) Execute(ctx context.Context, calls []transcript.ToolCall, i int, args string) tool.Result {
	if res, ok := step.Unusable(calls[i]); ok {
		return res
	}
	return c.p.Execute(ctx, c.env, calls[i], args, func(ctx context.Context, args string) tool.Result {
		return c.executeGated(ctx, calls, i, args)
	})
}
