// Package step is the step loop every conversation of a session runs —
// the user's turn and each sub-agent's task — and the assembly of its
// requests: request → model → intake → loop guard → gate → run → commit,
// with every step committed before the next request and every call a
// reply made answered, so a stored conversation is always one the API
// accepts. A conversation plugs in through the Conversation interface; its
// requests are built by a Requester through the same ordered Steps.
package step

import (
	"context"
	"time"

	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// Conversation is what the step loop runs over: a user's turn in the
// session (turnLoop) or a sub-agent's task (child). The loop is the same
// for both — request → model → intake → guard → gate → run → commit — and
// a conversation differs only in its history, registry, prompt, budget and
// what it reports.
type Conversation interface {
	// Begin is called before step (counted from 1) is requested; a
	// non-empty reason or an error ends the loop there (the error says
	// why; alone it means the step failed).
	Begin(step int) (reason string, err error)
	// Send builds the step's request and streams it to the model: the
	// turn first relieves context pressure, and recovers once from a
	// rejected length.
	Send(ctx context.Context, step int) (*llm.Response, error)
	// Intake gives the reply's calls ids unique in the conversation,
	// redacted stored arguments and the arguments each runs with.
	Intake(in []llm.ToolCall) ([]transcript.ToolCall, map[string]string, int)
	// CommitReply stores the reply with the one ledger row of its
	// response, and reports its usage.
	CommitReply(step int, resp *llm.Response, reply transcript.Message) error
	// BeforeCalls is called with a reply's calls before any runs; a
	// non-empty reason or an error ends the loop without running them
	// (they must have been answered by then), as with begin.
	BeforeCalls(step int, calls []transcript.ToolCall) (reason string, err error)
	// LoopGuard is the conversation's loop guard.
	LoopGuard() *guard.Guard
	// StartCall reports that call is about to run.
	StartCall(step int, call transcript.ToolCall)
	// Execute runs call i of calls, through the gate, with args, the
	// model's own arguments.
	Execute(ctx context.Context, calls []transcript.ToolCall, i int, args string) tool.Result
	// CommitResult stores call's result.
	CommitResult(call transcript.ToolCall, res tool.Result) error
	// Skip answers calls that will not run with text.
	Skip(calls []transcript.ToolCall, text string) error
	// EndRound is called after every call of a reply has an answer, with
	// the paths they wrote; it is not called when the loop ends early.
	EndRound(ctx context.Context, written []string) error
	// Words are the conversation's sentences for the calls it skips.
	Words() SkipWords
}

// SkipWords are what a conversation tells the model of calls it did not
// run.
type SkipWords struct {
	CancelledBefore string // the stop came before the call ran
	CancelledDuring string // the stop cut the call short
	Halted          string // the loop guard ended the conversation
}

// End is how the step loop ended.
type End struct {
	Reason string // one of the Reason constants
	Steps  int    // model requests made
	Answer string // the text of the last reply, when the loop ended after one
	Halt   string // the loop guard's message, with ReasonHalted
	Err    error
}

// Run alternates the conversation's model requests and tool calls
// until the model answers without calling a tool, the conversation's
// budget or the loop guard ends it, ctx ends or a step fails. Every step
// is committed before the next request, and every call a reply made gets
// an answer, so the stored conversation is always one the API accepts.
func Run(ctx context.Context, c Conversation, now func() time.Time) End {
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return End{Reason: ReasonCancelled, Steps: step - 1}
		}
		if reason, err := c.Begin(step); reason != "" || err != nil {
			return End{Reason: stopped(reason), Steps: step - 1, Err: err}
		}
		resp, err := c.Send(ctx, step)
		if err != nil {
			if ctx.Err() != nil {
				return End{Reason: ReasonCancelled, Steps: step}
			}
			return End{Reason: ReasonFailed, Steps: step, Err: err}
		}
		calls, run, redacted := c.Intake(resp.ToolCalls)
		reply, content := Reply(resp, calls, redacted, now())
		if err := c.CommitReply(step, resp, reply); err != nil {
			return End{Reason: ReasonFailed, Steps: step, Err: err}
		}
		if len(calls) == 0 {
			return End{Reason: ReasonDone, Steps: step, Answer: content}
		}
		end, err := End{}, error(nil)
		if end.Reason, err = c.BeforeCalls(step, calls); end.Reason == "" && err == nil {
			end = runCalls(ctx, c, step, calls, run)
		} else {
			end = End{Reason: stopped(end.Reason), Err: err}
		}
		if end.Reason != "" {
			end.Steps, end.Answer = step, content
			return end
		}
	}
}

// runCalls runs one reply's calls in order through the loop guard,
// committing each result. It returns a zero End when every call ran
// and the round ended well, or why the loop must stop.
func runCalls(ctx context.Context, c Conversation, step int, calls []transcript.ToolCall, run map[string]string) End {
	w := c.Words()
	var written []string
	for i, call := range calls {
		if ctx.Err() != nil {
			return ended(ReasonCancelled, c.Skip(calls[i:], w.CancelledBefore))
		}
		c.StartCall(step, call)
		res, halt, ran := Guarded(c.LoopGuard(), call, func() tool.Result {
			return c.Execute(ctx, calls, i, runArgs(run, call))
		}, func() bool { return ctx.Err() != nil })
		if ran && ctx.Err() != nil && res.IsError {
			return ended(ReasonCancelled, c.Skip(calls[i:], w.CancelledDuring))
		}
		if err := c.CommitResult(call, res); err != nil {
			return End{Reason: ReasonFailed, Err: err}
		}
		if res.Wrote {
			written = append(written, res.Paths...)
		}
		if halt != "" {
			end := ended(ReasonHalted, c.Skip(calls[i+1:], w.Halted))
			if end.Err == nil {
				end.Halt = halt
			}
			return end
		}
	}
	return ended("", c.EndRound(ctx, written))
}

// stopped is the reason a hook gave for ending the loop, or ReasonFailed
// when it gave only an error: a hook's error explains its reason.
func stopped(reason string) string {
	if reason == "" {
		return ReasonFailed
	}
	return reason
}

// ended is a loop that ends for reason, or failed when err is not nil:
// a call that could not be answered leaves the conversation unfinished.
func ended(reason string, err error) End {
	if err != nil {
		return End{Reason: ReasonFailed, Err: err}
	}
	return End{Reason: reason}
}

// Guarded runs one tool call through the loop guard g, the same way for a
// turn and for every sub-agent: a call the guard blocks does not run and
// gets its message as an error result; one that runs is recorded, and the
// guard's warning, if any, is appended to its result. halt is the
// guard's message when the failures of the tool must end the loop. A call
// that was cut short by cancellation (cancelled reports it after run) is
// not recorded, so a stop is never counted as a failure of the tool.
func Guarded(g *guard.Guard, c transcript.ToolCall, run func() tool.Result, cancelled func() bool) (res tool.Result, halt string, ran bool) {
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

// NotRun returns the results of calls that will not run, each saying text,
// so a stored transcript stays one a strict server accepts. A turn and
// every sub-agent answer skipped calls with it.
func NotRun(calls []transcript.ToolCall, text string, at time.Time) []transcript.Message {
	msgs := make([]transcript.Message, 0, len(calls))
	for _, c := range calls {
		m := transcript.ToolResult(c, text, true, at)
		m.Kind = transcript.KindRepair
		msgs = append(msgs, m)
	}
	return msgs
}
