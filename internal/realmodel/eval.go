package realmodel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

// Arm is one way of running every task: its name and the flags of
// `tally run` that make it.
type Arm struct {
	Name  string
	Flags []string
}

// TaskResult is one task run in one arm.
type TaskResult struct {
	Task, Kind, Arm string
	Pass            bool
	// Why says why the checker failed the task, "" when it passed.
	Why string
	// Exit is tally run's exit status (1 when the turn failed, as at the
	// step limit).
	Exit int
	// Requests are the chat requests the turn sent; Prompt and Completion
	// their tokens as llama-server counted them; Evaluated the prompt
	// tokens it evaluated afresh and Cached those it took from its cache
	// (its timings); Ledger the prompt tokens of Tally's ledger.
	Requests, Prompt, Completion, Evaluated, Cached, Ledger int
	// ToolCalls the model made, ToolErrors among their results, and
	// Blocked the repeats the loop guard did not run.
	ToolCalls, ToolErrors, Blocked int
	// End is why the turn ended (done, step_limit, halted, failed).
	End      string
	Duration time.Duration
	// Problems are what must never happen: a crash, a hang, a request
	// refused, a transcript that would not be accepted, a reply or prompt
	// missing from the store.
	Problems []string
}

// RunTask runs task in arm: a fresh workspace under root, a new session
// of one turn through tally run, then the checker and the session's
// checks (ledger, export, the next request).
func RunTask(ctx context.Context, t Tally, p *Proxy, task Task, arm Arm, root string, maxSteps int) TaskResult {
	r := TaskResult{Task: task.Name, Kind: task.Kind, Arm: arm.Name}
	ws := filepath.Join(root, arm.Name, task.Name)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	if err := task.Setup(ws); err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	session := arm.Name + "-" + task.Name
	n0 := len(p.Exchanges())
	flags := append([]string{"--max-steps", fmt.Sprint(maxSteps)}, arm.Flags...)
	res, events := t.Run(ctx, session, ws, task.Prompt, flags...)
	r.Exit, r.Duration = res.Exit, res.Duration
	if res.Crashed || res.Hung {
		r.Problems = append(r.Problems, res.Err().Error())
	}
	for _, e := range p.Since(n0) {
		if !e.Chat() {
			continue
		}
		r.Requests++
		if e.Status != 200 {
			r.Problems = append(r.Problems, fmt.Sprintf("request %d was refused with HTTP %d", e.N, e.Status))
		}
		if e.Usage != nil {
			r.Prompt += e.Usage.PromptTokens
			r.Completion += e.Usage.CompletionTokens
		}
		if e.Timings != nil {
			r.Evaluated += e.Timings.PromptN
			r.Cached += e.Timings.CacheN
		}
	}
	for _, e := range events {
		switch {
		case e.Kind == "tool_start":
			r.ToolCalls++
		case e.Kind == "turn_end":
			r.End = e.Reason
		case e.Kind == "message" && e.Message != nil && e.Message.Role == "tool" && e.Message.IsError:
			r.ToolErrors++
			if len(e.Message.Blocks) > 0 && strings.HasPrefix(e.Message.Blocks[0].Text, "not executed:") {
				r.Blocked++
			}
		}
	}
	r.Problems = append(r.Problems, SessionProblems(ctx, t, session, []string{task.Prompt}, p.Since(n0))...)
	if l, err := t.Ledger(ctx, session); err == nil {
		r.Ledger = l.Totals.Prompt
	}
	out := Outcome{Answer: Answer(events), Checklist: LastChecklist(events)}
	if err := task.Check(ws, out); err != nil {
		r.Why = err.Error()
	} else {
		r.Pass = true
	}
	return r
}

// SessionProblems checks a stored session against what went over the
// wire: `tally inspect` passes its audit and gives a next request a
// strict server accepts, `tally export` holds every prompt, and every
// reply of a turn's request is stored (its text or its tool calls). The
// replies of the engine's own calls (a compaction's summary, a cycle's
// brief; told apart by their ledger rows, one per chat request in order)
// go into the rewritten prefix rather than the messages, and are not
// looked for.
func SessionProblems(ctx context.Context, t Tally, session string, prompts []string, exchanges []Exchange) []string {
	var probs []string
	var kinds []string // the ledger kind of each chat request, in order
	if l, err := t.Ledger(ctx, session); err != nil {
		probs = append(probs, "ledger: "+err.Error())
	} else {
		for _, r := range l.Rows {
			kinds = append(kinds, string(r.Kind))
		}
	}
	in, err := t.Inspect(ctx, session)
	if err != nil {
		probs = append(probs, "inspect: "+err.Error())
	} else if err := CheckRequest(in.Request); err != nil {
		probs = append(probs, "the next request would be refused: "+err.Error())
	}
	lines, err := t.Export(ctx, session)
	if err != nil {
		return append(probs, "export: "+err.Error())
	}
	var all strings.Builder
	ids := map[string]bool{}
	for _, l := range lines {
		all.WriteString(l.Text())
		all.WriteByte('\n')
		for _, c := range l.Message.ToolCalls {
			ids[c.ID] = true
		}
	}
	stored := all.String()
	for _, pr := range prompts {
		if !strings.Contains(stored, pr) {
			probs = append(probs, fmt.Sprintf("the export lacks the prompt %q", clip(pr)))
		}
	}
	chat := -1
	for _, e := range exchanges {
		if !e.Chat() {
			continue
		}
		chat++
		if e.Status != 200 || (chat < len(kinds) && kinds[chat] != "") {
			continue
		}
		for _, c := range e.Calls {
			if c.ID != "" && !ids[c.ID] {
				probs = append(probs, fmt.Sprintf("request %d: the tool call %s (%s) is not in the export", e.N, c.ID, c.Name))
			}
		}
		// The store keeps a reply with the engine's tags defused, as
		// every request after it carries it.
		if text := strings.TrimSpace(transcript.Neutralize(e.Content)); text != "" && len(e.Calls) == 0 && !strings.Contains(stored, text) {
			probs = append(probs, fmt.Sprintf("request %d: the reply %q is not in the export", e.N, clip(text)))
		}
	}
	return probs
}

// ArmSummary is one arm's line of the evaluation table.
type ArmSummary struct {
	Arm           string
	Tasks, Passed int
	// ByKind holds, per task kind, the tasks passed and run.
	ByKind                                                  map[string][2]int
	Requests, Prompt, Completion, Evaluated, Cached, Ledger int
	ToolCalls, ToolErrors, Blocked, Problems                int
	// Ends counts the turns by why they ended.
	Ends     map[string]int
	Duration time.Duration
}

// Summarize adds up the results of one arm.
func Summarize(arm string, results []TaskResult) ArmSummary {
	s := ArmSummary{Arm: arm, ByKind: map[string][2]int{}, Ends: map[string]int{}}
	for _, r := range results {
		if r.Arm != arm {
			continue
		}
		s.Tasks++
		k := s.ByKind[r.Kind]
		k[1]++
		if r.Pass {
			s.Passed++
			k[0]++
		}
		s.ByKind[r.Kind] = k
		s.Requests += r.Requests
		s.Prompt += r.Prompt
		s.Completion += r.Completion
		s.Evaluated += r.Evaluated
		s.Cached += r.Cached
		s.Ledger += r.Ledger
		s.ToolCalls += r.ToolCalls
		s.ToolErrors += r.ToolErrors
		s.Blocked += r.Blocked
		s.Ends[r.End]++
		s.Problems += len(r.Problems)
		s.Duration += r.Duration
	}
	return s
}
