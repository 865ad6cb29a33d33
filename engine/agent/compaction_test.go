package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// Markers of the engine's own requests, recognised by the scripts below.
const (
	summaryMarker = "Write a summary of the conversation so far"
	flatMarker    = "You summarise transcripts"
	briefMarker   = "This cycle is ending"
)

func isSummaryRequest(req *llmtest.Req) bool {
	last := req.Messages[len(req.Messages)-1].Content
	return strings.Contains(last, summaryMarker) || strings.Contains(req.Messages[0].Content, flatMarker)
}

func isBriefRequest(req *llmtest.Req) bool {
	return strings.Contains(req.Messages[len(req.Messages)-1].Content, briefMarker)
}

// smallWindow builds a harness whose model has the given context window,
// with a clock the test can move and files to read.
type smallWindow struct {
	*harness
	clock time.Time
}

func newSmallWindow(t *testing.T, window int, script llmtest.Script) *smallWindow {
	h := newHarness(t, script, tool.ApproveAll{})
	sw := &smallWindow{harness: h, clock: day}
	h.cfg.ContextWindow = window
	h.cfg.Now = func() time.Time { return sw.clock }
	h.cfg.NoDiagnostics = true
	for i := 0; i < 12; i++ {
		var b strings.Builder
		for l := 0; l < 60; l++ {
			fmt.Fprintf(&b, "file %d line %d: the quick brown fox jumps over the lazy dog %d times\n", i, l, i*l)
		}
		os.WriteFile(filepath.Join(h.ws, fmt.Sprintf("f%d.txt", i)), []byte(b.String()), 0o644)
	}
	for i := 0; i < 16; i++ { // larger files, ~3K tokens each
		var b strings.Builder
		for l := 0; l < 120; l++ {
			fmt.Fprintf(&b, "big %d line %d: lorem ipsum dolor sit amet, consectetur adipiscing %d\n", i, l, i+l)
		}
		os.WriteFile(filepath.Join(h.ws, fmt.Sprintf("g%d.txt", i)), []byte(b.String()), 0o644)
	}
	return sw
}

// checkRequests asserts what every request must satisfy, whatever the
// engine rewrote: the strict server accepted it (no system message after
// index 0, every call paired), and it ends with the status block.
func (sw *smallWindow) checkRequests(t *testing.T) {
	t.Helper()
	sw.noInvalid()
	for i, r := range sw.srv.Requests() {
		for j, m := range r.Messages {
			if j > 0 && m.Role == "system" {
				t.Fatalf("request %d: system message at %d", i, j)
			}
		}
	}
}

func rebuilds(rec *recorder) []string {
	var out []string
	for _, e := range rec.kinds(EventRebuild) {
		out = append(out, e.Reason)
	}
	return out
}

// TestPruneStopsTheCascade: re-reading files that changed in between
// leaves superseded copies; prune removes them and the cascade stops there,
// without a model call.
func TestPruneStopsTheCascade(t *testing.T) {
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			t.Error("a summary was requested although prune was enough")
			return llmtest.Text("summary")
		}
		k := req.ToolResultsSinceHuman()
		if k >= 28 {
			return llmtest.Text("done")
		}
		if k%2 == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"g0.txt"}`}}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run_shell", Arguments: fmt.Sprintf(`{"command":"echo change %d >> g0.txt"}`, k)}}}
	})
	sw := newSmallWindow(t, 32_000, script)
	s := sw.session("prune")
	if _, err := s.Run(context.Background(), "keep re-reading g0.txt"); err != nil {
		t.Fatal(err)
	}
	sw.checkRequests(t)
	if got := rebuilds(sw.rec); len(got) == 0 {
		t.Fatal("no compaction happened")
	}
	last := sw.srv.Requests()[len(sw.srv.Requests())-1]
	pruned := 0
	for _, m := range last.Messages {
		if strings.HasPrefix(m.Content, "[pruned") {
			pruned++
		}
	}
	if pruned == 0 {
		t.Error("no pruned result in the last request")
	}
	if s.st.Summary != "" {
		t.Error("a summary was merged although prune was enough")
	}
}

// TestMicroCompactAfterIdle: after an hour's pause the stale tool results
// are cleared to one-line placeholders, and that is enough.
func TestMicroCompactAfterIdle(t *testing.T) {
	var sw *smallWindow
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			t.Error("a summary was requested although micro-compact was enough")
			return llmtest.Text("summary")
		}
		k := req.ToolResultsSinceHuman()
		if k >= 2 {
			return llmtest.Text("read two files")
		}
		n := strings.Count(req.Rendered, "Read two more")
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.txt"}`, 2*n+k)}}}
	})
	sw = newSmallWindow(t, 32_000, script)
	s := sw.session("micro")
	ctx := context.Background()
	for turn := 0; turn < 4; turn++ {
		if _, err := s.Run(ctx, "Read two more files."); err != nil {
			t.Fatal(err)
		}
		sw.clock = sw.clock.Add(61 * time.Minute) // the user comes back after lunch
	}
	sw.checkRequests(t)
	got := rebuilds(sw.rec)
	if len(got) == 0 {
		t.Fatal("no compaction happened")
	}
	cleared := 0
	for _, m := range s.Snapshot().Messages() {
		if strings.HasPrefix(m.Text(), "[tool result cleared") {
			cleared++
		}
	}
	if cleared == 0 {
		t.Error("no tool result was cleared")
	}
}

// TestSummaryKeepsPinsAndChecklist: long answers, which only a summary
// can shrink, force an LLM summary; the summary lands in the system prompt
// (a booked drift), the pinned messages survive, and the checklist comes
// back as a reminder. The answers go on until the level reaches the
// ceiling, where automatic compaction runs whether or not it pays off. The
// window is 64K: in 32K the prefix and the pinned messages alone come
// within 10 % of the threshold, so no automatic compaction may run there.
func TestSummaryKeepsPinsAndChecklist(t *testing.T) {
	summaries, n := 0, 0
	answer := strings.Repeat("Files f0-f5 hold the fixture lines; each line names its file, its number and a count. ", 130)
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			summaries++
			return llmtest.Text("The user wants every file read. Files f0-f5 were read; nothing was changed. Next: read the rest.")
		}
		n++
		switch n {
		case 1:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "checklist_write", Arguments: `{"items":[{"content":"Read every file","status":"in_progress"},{"content":"Report the totals"}]}`}}}
		case 2:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"missing.txt"}`}}} // an error: pinned
		}
		return llmtest.Text(answer)
	})
	sw := newSmallWindow(t, 64_000, script)
	s := sw.session("summary")
	for i := 0; i < 30 && summaries == 0; i++ {
		if _, err := s.Run(context.Background(), "Read every file and report."); err != nil {
			t.Fatal(err)
		}
	}
	sw.checkRequests(t)
	if summaries == 0 {
		t.Fatal("no summary was requested")
	}
	if !strings.Contains(s.st.System, "Files f0-f5 were read") {
		t.Error("the summary is not in the system prompt")
	}
	reopened, err := Open(sw.cfg, "summary")
	if err != nil {
		t.Fatal(err)
	}
	if sys := reopened.Audit().NextRequest().Messages[0].Content; !strings.Contains(sys, "Files f0-f5 were read") || !strings.HasPrefix(sys, reopened.st.Base) {
		t.Error("a reopened session lost the summary merged into its system prompt")
	}
	drifts := sw.rec.kinds(EventDrift)
	if len(drifts) == 0 || !drifts[0].Drift.Booked {
		t.Errorf("the summary merge was not a booked drift: %+v", drifts)
	}
	msgs := s.Snapshot().Messages()
	var user, errPin, reminder bool
	for _, m := range msgs {
		user = user || (m.IsPlainUserText() && strings.Contains(m.Text(), "Read every file and report."))
		errPin = errPin || (m.Role == transcript.Tool && m.IsError)
		reminder = reminder || (m.Kind == transcript.KindReminder && strings.Contains(m.Text(), "Read every file"))
	}
	if !user || !errPin || !reminder {
		t.Errorf("after the summary: user text kept %v, error pinned %v, checklist reminder %v", user, errPin, reminder)
	}
	if err := transcript.CheckPairing(msgs); err != nil {
		t.Error(err)
	}
	recs, _ := sw.st.Records("rebuild", "summary")
	if len(recs) == 0 {
		t.Error("no rebuild record was stored")
	}
	rows, _ := s.Audit().Ledger()
	summaryRows := 0
	for _, r := range rows {
		if r.Kind == "summary" && r.PromptTokens > 0 {
			summaryRows++
		}
	}
	if summaryRows != summaries {
		t.Errorf("%d summary calls but %d summary rows in the ledger", summaries, summaryRows)
	}
}

// TestMemoryFileStandsInForTheSummary: a long question-and-answer session
// (nothing for the cheap layers to clear) with MEMORY.md in the workspace
// and a history in the 10K-40K band: the memory file is the summary and no
// model call is made.
func TestMemoryFileStandsInForTheSummary(t *testing.T) {
	answer := strings.Repeat("The design keeps history append-only so the prefix cache stays warm, and compaction is the one booked exception. ", 90)
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			t.Error("a summary was requested although MEMORY.md was there")
			return llmtest.Text("summary")
		}
		return llmtest.Text(answer)
	})
	sw := newSmallWindow(t, 1_000_000, script) // only the manual compaction runs
	os.WriteFile(filepath.Join(sw.ws, "MEMORY.md"), []byte("Project memory: the design questions were answered; the answer is 42."), 0o644)
	s := sw.session("memory")
	for i := 0; i < 10; i++ {
		if _, err := s.Run(context.Background(), fmt.Sprintf("Question %d: explain the design again.", i)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Compaction().Apply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != compact.LayerMemory || !strings.Contains(s.st.System, "the answer is 42") {
		t.Errorf("source %q; system prompt has the memory: %v", res.Source, strings.Contains(s.st.System, "the answer is 42"))
	}
	if res.TokensAfter >= res.TokensBefore {
		t.Errorf("tokens %d -> %d", res.TokensBefore, res.TokensAfter)
	}
	sw.checkRequests(t)
}

// TestEmergencyRecovery: the provider rejects a request as too long; the
// engine compacts by force, truncates if needed, and the retry succeeds.
func TestEmergencyRecovery(t *testing.T) {
	rejected := false
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text("Earlier: four files were read.")
		}
		k := req.ToolResultsSinceHuman()
		if k < 4 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.txt"}`, k)}}}
		}
		if !rejected {
			rejected = true
			return llmtest.Reply{Fault: llmtest.FaultContextLength}
		}
		return llmtest.Text("recovered")
	})
	sw := newSmallWindow(t, 1_000_000, script) // the trigger never fires: only the 400 does
	s := sw.session("emergency")
	res, err := s.Run(context.Background(), "Read four files.")
	if err != nil || res.Answer != "recovered" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	sw.checkRequests(t)
	if got := rebuilds(sw.rec); len(got) == 0 || !strings.HasPrefix(got[0], "emergency") {
		t.Errorf("rebuilds = %v; want an emergency one", got)
	}
}

// TestFailureBreakerTripsAndRecovers: three failed summaries open the
// breaker (alert in the status); five minutes later a probe is allowed and
// succeeds; a manual compaction bypasses an open breaker. The history is
// long answers, which only a summary can shrink, and it grows until the
// level reaches the ceiling, where automatic compaction runs whether or
// not it pays off.
func TestFailureBreakerTripsAndRecovers(t *testing.T) {
	failing := true
	answer := strings.Repeat("The eviction order follows the access list, oldest first, and the lock is held for the walk. ", 120)
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			if failing {
				return llmtest.Text("") // an empty summary is a failure
			}
			return llmtest.Text("Summary: the cache was explained.")
		}
		return llmtest.Text(answer)
	})
	sw := newSmallWindow(t, 64_000, script)
	s := sw.session("breaker")
	ctx := context.Background()
	for i := 0; i < 30 && !s.st.Breakers.Open(); i++ {
		s.Run(ctx, "Explain the cache again.")
	}
	if !s.st.Breakers.Open() {
		t.Fatalf("breaker not open after failing summaries: %+v", s.st.Breakers)
	}
	st := s.Audit().NextStatus()
	if !strings.Contains(st, "compaction") {
		t.Errorf("open breaker is not in the status alerts:\n%s", st)
	}
	failing = false
	sw.clock = sw.clock.Add(6 * time.Minute) // half-open: a probe is allowed
	s.Run(ctx, "Explain the cache again.")
	if s.st.Breakers.Open() || s.st.Summary == "" {
		t.Errorf("the probe did not close the breaker: %+v (summary %q)", s.st.Breakers, s.st.Summary)
	}
	sw.checkRequests(t)
}

// TestManualCompactionBypassesAnOpenBreaker.
func TestManualCompactionBypassesAnOpenBreaker(t *testing.T) {
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text("Summary: f0 and f1 were read.")
		}
		if k := req.ToolResultsSinceHuman(); k < 14 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"g%d.txt"}`, k)}}}
		}
		return llmtest.Text("ok")
	})
	sw := newSmallWindow(t, 1_000_000, script)
	s := sw.session("manual")
	s.Run(context.Background(), "Read fourteen files.")
	for i := 0; i < 3; i++ {
		s.st.Breakers.Failed(sw.clock)
	}
	if ok, _ := s.st.Breakers.Allow(sw.clock, false); ok {
		t.Fatal("breaker should refuse automatic compaction")
	}
	res, err := s.Compaction().Apply(context.Background())
	if err != nil || !res.Applied {
		t.Fatalf("manual compaction = %+v, %v", res, err)
	}
}

// TestThrashingPausesAutoCompaction: a tool that returns a huge output
// every round refills the context soon after each compaction. Each
// automatic compaction rewrites what the provider has cached, so the third
// one in the turn trips the thrash breaker: automatic compaction pauses for
// the turn with an actionable message, said once, and at the cycle
// threshold the session rolls over instead. (The rapid-refill breaker
// would trip at the third refill, after the third compaction; the thrash
// breaker now stops such a turn first. compact.TestRapidRefill covers it.)
// The window is 64K, so that a compaction can leave room below the
// threshold at all.
func TestThrashingPausesAutoCompaction(t *testing.T) {
	big := strings.Repeat("a line of a very large log file that keeps coming back\n", 360)
	rounds := 0
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text("Summary: the log was read again.")
		}
		if isBriefRequest(req) {
			return llmtest.Text("<carry_forward>Read the log in slices.</carry_forward>")
		}
		if rounds++; rounds <= 60 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run_shell", Arguments: fmt.Sprintf(`{"command":"cat big.log; echo %d"}`, rounds)}}}
		}
		return llmtest.Text("done")
	})
	sw := newSmallWindow(t, 64_000, script)
	os.WriteFile(filepath.Join(sw.ws, "big.log"), []byte(big), 0o644)
	s := sw.session("refill")
	s.Run(context.Background(), "Read the log over and over.")
	sw.checkRequests(t)
	var paused []string
	for _, e := range sw.rec.kinds(EventError) {
		if strings.Contains(e.Err, "paused") {
			paused = append(paused, e.Err)
		}
	}
	// The first rewrites of the turn: the compactions up to the pause,
	// then the cycle. (A new cycle starts a fresh cache, so what follows
	// it in the same turn is the new cycle's.)
	var kinds []string
	for _, e := range sw.rec.kinds(EventRebuild) {
		kinds = append(kinds, string(e.Rebuild.Kind))
	}
	want := append(slices.Repeat([]string{string(rewrite.Compaction)}, compact.ThrashTurnLimit+1), string(rewrite.Cycle))
	if len(kinds) < len(want) || !slices.Equal(kinds[:len(want)], want) {
		t.Errorf("rewrites %v; want %v first", kinds, want)
	}
	if len(paused) != 1 || !strings.Contains(paused[0], "slices") {
		t.Errorf("pause messages %q; want one that says to read in slices", paused)
	}
}

// TestCyclesAndRecall: with compaction off, a 16K-window session rolls
// over into new cycles; a fact from cycle 1 is found by recall_archive in
// cycle 3.
func TestCyclesAndRecall(t *testing.T) {
	var recalled string
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isBriefRequest(req) {
			return llmtest.Text("<carry_forward>Decisions: keep reading fixtures. Open: none.</carry_forward>")
		}
		human := req.LastHuman()
		if strings.Contains(human, "What was the port") {
			if req.ToolResultsSinceHuman() == 0 {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "recall_archive", Arguments: `{"query":"staging port"}`}}}
			}
			recalled = req.Messages[len(req.Messages)-2].Content
			return llmtest.Text("It was 4471.")
		}
		k := req.ToolResultsSinceHuman()
		if k < 2 {
			n := strings.Count(req.Rendered, "Read two files")
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.txt"}`, (2*n+k)%12)}}}
		}
		return llmtest.Text("read")
	})
	sw := newSmallWindow(t, 16_000, script)
	sw.cfg.Compaction = rewrite.Off
	s := sw.session("cycles")
	ctx := context.Background()
	if _, err := s.Run(ctx, "Note: the staging port is 4471. Read two files."); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12 && s.Snapshot().Meta.Cycle < 3; i++ {
		if _, err := s.Run(ctx, "Read two files."); err != nil {
			t.Fatal(err)
		}
	}
	if c := s.Snapshot().Meta.Cycle; c < 3 {
		t.Fatalf("still in cycle %d", c)
	}
	if _, err := s.Run(ctx, "What was the port for staging?"); err != nil {
		t.Fatal(err)
	}
	sw.checkRequests(t)
	if !strings.Contains(recalled, "4471") || !strings.Contains(recalled, "c1:") {
		t.Errorf("recall_archive did not find the cycle-1 fact:\n%.500s", recalled)
	}
	arch, err := s.Compaction().Archives()
	if err != nil || len(arch) < 2 || arch[0].Cycle != 1 || !strings.Contains(arch[0].Brief, "keep reading fixtures") {
		t.Fatalf("archives = %d, %v", len(arch), err)
	}
	// The new cycle starts from the seed and the acknowledgement.
	msgs := s.Snapshot().Messages()
	if msgs[0].Kind != transcript.KindSeed || msgs[1].Kind != transcript.KindAck || !msgs[2].IsPlainUserText() {
		t.Errorf("cycle starts with %s/%s/%s; want the seed, the acknowledgement and the user's request", msgs[0].Kind, msgs[1].Kind, msgs[2].Kind)
	}
}

func TestWorkingSetIsRebuiltFromWhatRemains(t *testing.T) {
	prev := status.WorkingSet{Paths: []string{"gone.go", "kept.go", "typed.md"}}
	msgs := []transcript.Message{
		transcript.UserText("", "look at typed.md", day),
		{Role: transcript.Tool, Paths: []string{"kept.go"}},
	}
	got := workingSetOf(msgs, prev)
	if strings.Join(got.Paths, ",") != "kept.go,typed.md" {
		t.Errorf("working set = %v; want kept.go, typed.md", got.Paths)
	}
}
