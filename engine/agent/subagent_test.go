package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// isChildReq tells a sub-agent's request from the parent's by its system
// prompt.
func isChildReq(msgs []llmtest.Message) bool {
	return len(msgs) > 0 && strings.HasPrefix(msgs[0].Content, "# Sub-agent:")
}

func toolResults(msgs []llmtest.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

func taskCall(desc, prompt, kind string) llmtest.ToolCall {
	args, _ := json.Marshal(map[string]string{"description": desc, "prompt": prompt, "kind": kind})
	return llmtest.ToolCall{Name: subagent.TaskToolName, Arguments: string(args)}
}

// twoJobs is a model that delegates two jobs in one reply: job A reads
// a.txt, job B lists the workspace; each child reports after one tool
// call, and the parent answers once both reports are in.
func twoJobs(kind string) llmtest.ScriptFunc {
	return func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			job := r.Messages[1].Content
			if toolResults(r.Messages) > 0 {
				if strings.Contains(job, "job A") {
					return llmtest.Text("Report A: the file holds a single word.")
				}
				return llmtest.Text("Report B: the workspace has one file.")
			}
			if strings.Contains(job, "job A") {
				return llmtest.Call("read_file", `{"path":"notes.txt"}`)
			}
			return llmtest.Call("list_dir", `{"path":"."}`)
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				taskCall("read notes", "job A: read notes.txt and say what it holds", kind),
				taskCall("list files", "job B: list the workspace", kind),
			}}
		}
		return llmtest.Text("Both jobs are done.")
	}
}

// barrier holds each child's first request until n children made theirs:
// it passes only when the children run at the same time.
func barrier(t *testing.T, inner llm.Model, n int) llm.Model {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	return llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		first := len(req.Messages) == 2 && strings.HasPrefix(req.Messages[0].Content, "# Sub-agent:")
		if first {
			mu.Lock()
			if arrived++; arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Minute): // a deadlock detector, not a timing assertion
				t.Error("the children did not run at the same time")
			}
		}
		return inner.Stream(ctx, req, cb)
	})
}

func TestTaskDelegatesTwoJobsInParallel(t *testing.T) {
	h := newHarness(t, twoJobs(""), nil)
	h.cfg.Model = barrier(t, h.cfg.Model, 2)
	os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("kumquat marmalade\n"), 0o644)
	s := h.session("p1")
	before := s.Snapshot().Messages()
	res, err := s.Run(context.Background(), "investigate the workspace")
	if err != nil || res.Reason != step.ReasonDone {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	h.noInvalid() // every request of the parent and the children was accepted

	// The parent's log grew by the user's message, the call, the two
	// reports and the answer: nothing of the children's work.
	msgs := s.Snapshot().Messages()
	if len(before) != 0 || len(msgs) != 5 {
		t.Fatalf("parent log has %d messages (had %d); want 5", len(msgs), len(before))
	}
	for i, want := range []string{"[sub-agent sub-1 · explore · done · 2 of 25 steps · ", "[sub-agent sub-2 · explore · done · 2 of 25 steps · "} {
		m := msgs[2+i]
		if m.Role != transcript.Tool || m.IsError || !strings.HasPrefix(m.Text(), want) {
			t.Errorf("result %d = %q; want the envelope %q", i, m.Text(), want)
		}
	}
	if !strings.Contains(msgs[2].Text(), "1 files read]\n\nReport A: the file holds a single word.") ||
		!strings.HasSuffix(msgs[3].Text(), "\n\nReport B: the workspace has one file.") {
		t.Errorf("reports = %q, %q", msgs[2].Text(), msgs[3].Text())
	}
	var parentReqs, childReqs []llmtest.Recorded
	for _, r := range h.srv.Requests() {
		if strings.Contains(string(r.Body), "# Sub-agent:") {
			childReqs = append(childReqs, r)
		} else {
			parentReqs = append(parentReqs, r)
		}
	}
	if len(parentReqs) != 2 || len(childReqs) != 4 {
		t.Fatalf("%d parent and %d child requests; want 2 and 4", len(parentReqs), len(childReqs))
	}
	if !strings.Contains(string(childReqs[len(childReqs)-1].Body)+string(childReqs[len(childReqs)-2].Body), "kumquat") {
		t.Error("no child request carries the file it read")
	}
	for _, r := range parentReqs {
		if strings.Contains(string(r.Body), "kumquat") {
			t.Errorf("a parent request carries a child's tool result: %s", r.Body)
		}
	}

	// The children's transcripts are stored and valid; the two share the
	// explore prefix.
	kids, err := s.Subagents().List()
	if err != nil || len(kids) != 2 {
		t.Fatalf("Children = %+v, %v", kids, err)
	}
	var systems []string
	for _, k := range kids {
		if k.Status != step.ReasonDone || k.Steps != 2 || k.PromptTokens == 0 || k.CallID == "" || k.ReportSHA == "" {
			t.Errorf("child %+v", k)
		}
		info, log, err := s.Subagents().Read(k.ID)
		if err != nil || len(log) != 4 || info.Messages != 4 {
			t.Fatalf("ReadChild(%s) = %d messages, %v", k.ID, len(log), err)
		}
		if err := transcript.CheckPairing(log); err != nil {
			t.Errorf("child %s transcript: %v", k.ID, err)
		}
		if log[1].Role != transcript.Assistant || len(log[1].ToolCalls) != 1 || log[2].Role != transcript.Tool {
			t.Errorf("child %s transcript = %+v", k.ID, log)
		}
		systems = append(systems, subagent.Prompt(k.Kind, h.ws))
	}
	if kids[0].FilesRead != 1 || kids[1].FilesRead != 0 {
		t.Errorf("files read = %d, %d; want 1, 0", kids[0].FilesRead, kids[1].FilesRead)
	}
	if systems[0] != systems[1] {
		t.Error("two explore children have different system prompts")
	}
	if _, _, err := s.Subagents().Read("sub-9"); err == nil {
		t.Error("ReadChild of an unknown child succeeded")
	}

	// Their requests are ledger rows of kind subagent in the totals.
	recs, _ := h.st.Records(storage.KindLedger, "p1")
	var rows []ledger.Row
	sub := map[string]int{}
	for _, r := range recs {
		var row ledger.Row
		json.Unmarshal(r.Data, &row)
		rows = append(rows, row)
		if row.Kind == ledger.KindSubagent {
			sub[row.Subagent]++
		}
	}
	if sub["sub-1"] != 2 || sub["sub-2"] != 2 || len(rows) != 6 {
		t.Errorf("ledger rows %d, subagent rows %v", len(rows), sub)
	}
	if tot := ledger.Sum(rows, ledger.OnePrice(ledger.Price{}, false)); tot.Requests != 6 || tot.Prompt <= kids[0].PromptTokens+kids[1].PromptTokens {
		t.Errorf("totals %+v", tot)
	}

	// The app can draw the cards from the events.
	if n := len(h.rec.kinds(EventSubagentStart)); n != 2 {
		t.Errorf("%d start events", n)
	}
	for _, e := range h.rec.kinds(EventSubagentEnd) {
		if e.Reason != step.ReasonDone || e.Subagent == nil || e.Subagent.Steps != 2 || e.Subagent.Tokens() == 0 {
			t.Errorf("end event %+v", e)
		}
	}
	if n := len(h.rec.kinds(EventSubagentStep)); n != 4 {
		t.Errorf("%d step events; want 4", n)
	}
}

func TestStopCancelsChildren(t *testing.T) {
	arrived := make(chan struct{}, 4)
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			arrived <- struct{}{}
			return llmtest.Reply{Content: "never seen", Delay: 10 * time.Minute}
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("one", "job one", ""), taskCall("two", "job two", "")}}
		}
		return llmtest.Text("Understood.")
	})
	h := newHarness(t, script, nil)
	s := h.session("p2")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		res, _ := s.Run(ctx, "start two jobs")
		done <- res
	}()
	<-arrived
	<-arrived
	cancel()
	res := <-done
	if res.Reason != step.ReasonCancelled {
		t.Fatalf("Run ended %q; want cancelled", res.Reason)
	}
	msgs := s.Snapshot().Messages()
	if err := transcript.CheckPairing(msgs); err != nil {
		t.Fatalf("parent transcript: %v", err)
	}
	for _, m := range msgs[2:] {
		if !m.IsError || !strings.Contains(m.Text(), "cancelled") {
			t.Errorf("result after Stop = %q", m.Text())
		}
	}
	kids, _ := s.Subagents().List()
	if len(kids) != 2 {
		t.Fatalf("children = %+v", kids)
	}
	for _, k := range kids {
		_, log, _ := s.Subagents().Read(k.ID)
		if k.Status != step.ReasonCancelled || transcript.CheckPairing(log) != nil {
			t.Errorf("child %s ended %q with transcript %+v", k.ID, k.Status, log)
		}
	}
	// The parent goes on from the cancelled results: the strict server
	// accepts its next request.
	if res, err := s.Run(context.Background(), "go on"); err != nil || res.Reason != step.ReasonDone {
		t.Fatalf("next turn = %+v, %v", res, err)
	}
	h.noInvalid()
}

func TestExploreChildCannotWrite(t *testing.T) {
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			if toolResults(r.Messages) == 0 {
				return llmtest.Call("write_file", `{"path":"new.txt","content":"x"}`)
			}
			return llmtest.Text("I could not write.")
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("write", "write new.txt", "explore")}}
		}
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	h.cfg.Mode = tool.ModeAutoEdit // writes would apply without asking, were the tool there
	s := h.session("p3")
	if _, err := s.Run(context.Background(), "try"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	if _, err := os.Stat(filepath.Join(h.ws, "new.txt")); err == nil {
		t.Fatal("an explore sub-agent wrote a file")
	}
	_, log, err := s.Subagents().Read("sub-1")
	if err != nil || len(log) < 3 || !log[2].IsError || !strings.Contains(log[2].Text(), `has no tool "write_file"`) {
		t.Fatalf("child transcript = %+v, %v", log, err)
	}
	for _, name := range s.Subagents().ToolNames(subagent.Explore) {
		if name == "write_file" || name == "edit_file" || name == "run_shell" {
			t.Errorf("the explore catalog offers %s", name)
		}
	}
}

func TestGeneralChildRefusedInReadOnlyMode(t *testing.T) {
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("fix", "fix the bug", "general")}}
		}
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	h.cfg.Mode = tool.ModeReadOnly
	s := h.session("p4")
	if _, err := s.Run(context.Background(), "fix it"); err != nil {
		t.Fatal(err)
	}
	m := s.Snapshot().Messages()[2]
	if !m.IsError || !strings.Contains(m.Text(), "read-only mode") {
		t.Errorf("result = %q", m.Text())
	}
	if kids, _ := s.Subagents().List(); len(kids) != 0 {
		t.Errorf("a child started: %+v", kids)
	}
}

func TestReportIsCapped(t *testing.T) {
	long := strings.Repeat("word ", 3000)
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			return llmtest.Text(long)
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("long", "write a lot", "")}}
		}
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, nil)
	h.cfg.Subagents.ReportTokens = 100
	s := h.session("p5")
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	text := s.Snapshot().Messages()[2].Text()
	kids, _ := s.Subagents().List()
	if len(text) > len(long)/2 || !strings.Contains(text, "report cut at 100 of") || !strings.Contains(text, kids[0].ReportSHA) {
		t.Errorf("capped report (%d bytes) = %q", len(text), text[len(text)-200:])
	}
	if whole, err := h.st.Blob(kids[0].ReportSHA); err != nil || strings.TrimSpace(string(whole)) != strings.TrimSpace(long) {
		t.Errorf("the whole report is not in the blob store: %v", err)
	}
}

func TestNewCycleCarriesSubagents(t *testing.T) {
	h := newHarness(t, twoJobs(""), nil)
	s := h.session("p6")
	if _, err := s.Run(context.Background(), "investigate"); err != nil {
		t.Fatal(err)
	}
	if err := s.Compaction().NewCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	kids, _ := s.Subagents().List()
	reminder := func() string { // the new cycle's seed lists them
		for _, m := range s.Snapshot().Messages() {
			if m.Kind == transcript.KindSeed && strings.Contains(m.Text(), "Sub-agents of the previous cycle") {
				return m.Text()
			}
		}
		return ""
	}
	if _, err := s.Run(context.Background(), "what did the jobs find?"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	text := reminder()
	for _, k := range kids {
		if !strings.Contains(text, "- "+k.ID+" ") || !strings.Contains(text, k.ReportSHA) || !strings.Contains(text, k.ReportHead) {
			t.Errorf("the new cycle's seed does not carry %s: %q", k.ID, text)
		}
	}
	// Once carried, the next turn adds nothing.
	if _, err := s.Run(context.Background(), "thanks"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(fmtMessages(s.Snapshot().Messages()), "Sub-agents whose reports"); got != 0 {
		t.Errorf("a reminder repeated what the seed carries (%d times)", got)
	}
}

func fmtMessages(msgs []transcript.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text())
	}
	return b.String()
}
