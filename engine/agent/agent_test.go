package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

var day = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) on(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) kinds(k EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

type harness struct {
	t   testing.TB
	srv *llmtest.Server
	st  *storage.Store
	ws  string
	rec *recorder
	cfg Config
}

func newHarness(t testing.TB, script llmtest.Script, approver tool.Approver, opts ...llmtest.Option) *harness {
	t.Helper()
	srv := llmtest.New(script, opts...)
	t.Cleanup(srv.Close)
	st, err := storage.Open(filepath.Join(t.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644)
	h := &harness{t: t, srv: srv, st: st, ws: ws, rec: &recorder{}}
	h.cfg = Config{
		Store: st, Approver: approver, Now: func() time.Time { return day },
		ModelChoice: ModelChoice{ModelName: "deepseek-chat", Model: llm.NewOpenAI(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test",
			Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})},
		OnEvent: h.rec.on,
	}
	return h
}

func (h *harness) session(id string) *Session {
	h.t.Helper()
	s, err := Create(h.cfg, id, h.ws, "")
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) noInvalid() {
	h.t.Helper()
	if bad := h.srv.Invalid(); len(bad) > 0 {
		h.t.Fatalf("server rejected a request: %s", bad[0].Error)
	}
}

func TestTurnStreamsAndCommits(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Reply{Content: "Hello there, **friend**.", Reasoning: "greet"}), nil)
	s := h.session("s1")
	res, err := s.Run(context.Background(), "hi")
	if err != nil || res.Reason != step.ReasonDone || res.Answer != "Hello there, **friend**." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	var streamed strings.Builder
	for _, e := range h.rec.kinds(EventDelta) {
		streamed.WriteString(e.Delta.Content)
	}
	if streamed.String() != res.Answer {
		t.Errorf("streamed %q; want %q", streamed.String(), res.Answer)
	}
	u := h.rec.kinds(EventUsage)
	if len(u) != 1 || !u[0].Usage.First || u[0].Usage.PromptTokens == 0 || u[0].Usage.ContextTokens == 0 {
		t.Errorf("usage events %+v", u)
	}
	// Reopen from the store: same messages, same next request bytes.
	again, err := Open(h.cfg, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := len(again.Snapshot().Messages()), len(s.Snapshot().Messages()); a != b || a != 2 {
		t.Errorf("reopened %d messages; want %d", a, b)
	}
	r1, r2 := s.Audit().NextRequest(), again.Audit().NextRequest()
	if fmt.Sprint(r1.Messages) != fmt.Sprint(r2.Messages) {
		t.Error("reopened session assembles a different request")
	}
	if v := again.Snapshot(); v.Level != u[0].Usage.ContextTokens || v.Exact {
		t.Errorf("reopened level %d (exact %v); want %d estimated", v.Level, v.Exact, u[0].Usage.ContextTokens)
	}
}

func TestDenyAndApproveAlways(t *testing.T) {
	write := llmtest.ToolCall{Name: "write_file", Arguments: `{"path":"b.txt","content":"x"}`}
	script := llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{write}}, llmtest.Text("ok, not writing"),
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{write}}, llmtest.Reply{ToolCalls: []llmtest.ToolCall{write}}, llmtest.Text("wrote twice"),
	)
	ap := &scriptedApprover{answers: []tool.Decision{tool.Deny, tool.ApproveAlways}}
	h := newHarness(t, script, ap)
	s := h.session("s")
	if _, err := s.Run(context.Background(), "write b.txt"); err != nil {
		t.Fatal(err)
	}
	msgs := s.Snapshot().Messages()
	if res := msgs[2]; !res.IsError || !strings.Contains(res.Text(), "denied") {
		t.Errorf("deny result = %q", res.Text())
	}
	if _, err := os.Stat(filepath.Join(h.ws, "b.txt")); err == nil {
		t.Error("denied write happened")
	}
	if _, err := s.Run(context.Background(), "now write it"); err != nil {
		t.Fatal(err)
	}
	if ap.asked != 2 {
		t.Errorf("approver asked %d times; want 2 (always allow covers the second call)", ap.asked)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "b.txt")); err != nil {
		t.Error("approved write did not happen")
	}
	h.noInvalid()
}

type scriptedApprover struct {
	mu      sync.Mutex
	answers []tool.Decision
	asked   int
}

func (a *scriptedApprover) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	if len(a.answers) == 0 {
		return tool.Deny, nil
	}
	d := a.answers[0]
	a.answers = a.answers[1:]
	return d, nil
}

// blockingApprover waits until the turn is cancelled.
type blockingApprover struct{ asked chan struct{} }

func (b blockingApprover) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	close(b.asked)
	<-ctx.Done()
	return tool.Deny, ctx.Err()
}

func TestStopWhileWaitingForApproval(t *testing.T) {
	calls := []llmtest.ToolCall{
		{Name: "run_shell", Arguments: `{"command":"echo 1"}`},
		{Name: "read_file", Arguments: `{"path":"a.txt"}`},
	}
	ap := blockingApprover{asked: make(chan struct{})}
	h := newHarness(t, llmtest.Sequence(llmtest.Reply{ToolCalls: calls}, llmtest.Text("after stop")), ap)
	s := h.session("s")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-ap.asked; cancel() }()
	res, err := s.Run(ctx, "run it")
	if err != nil || res.Reason != step.ReasonCancelled {
		t.Fatalf("Run = %+v, %v; want cancelled", res, err)
	}
	msgs := s.Snapshot().Messages()
	if err := transcript.CheckPairing(msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 || !strings.Contains(msgs[2].Text(), "cancelled") || !strings.Contains(msgs[3].Text(), "cancelled") {
		t.Fatalf("after stop: %d messages %+v", len(msgs), msgs)
	}
	if _, err := s.Run(context.Background(), "continue"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
}

func TestStopMidStream(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Reply{Content: "slow answer", Delay: 5 * time.Second}, llmtest.Text("quick")), nil)
	s := h.session("s")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := s.Run(ctx, "take your time")
	if err != nil || res.Reason != step.ReasonCancelled {
		t.Fatalf("Run = %+v, %v; want cancelled", res, err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("stop took %s", d)
	}
	if _, err := s.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
}

func TestStepLimit(t *testing.T) {
	loop := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"a.txt","offset":%d}`, req.Index+1)}}}
	})
	h := newHarness(t, loop, nil)
	h.cfg.MaxSteps = 3
	s := h.session("s")
	res, err := s.Run(context.Background(), "loop")
	if err == nil || res.Reason != step.ReasonStepLimit || !strings.Contains(err.Error(), "step limit") {
		t.Fatalf("Run = %+v, %v; want step limit", res, err)
	}
	if n := len(h.srv.Requests()); n != 3 {
		t.Errorf("%d requests; want 3", n)
	}
	if err := transcript.CheckPairing(s.Snapshot().Messages()); err != nil {
		t.Error(err)
	}
}

func TestBadToolCallsBecomeErrorResults(t *testing.T) {
	script := llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "read_file", Arguments: `{"path": "a.txt"`},
			{Name: "teleport", Arguments: `{}`},
			{Name: "read_file", Arguments: ``},
		}},
		llmtest.Text("recovered"),
	)
	h := newHarness(t, script, nil)
	s := h.session("s")
	res, err := s.Run(context.Background(), "go")
	if err != nil || res.Answer != "recovered" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	msgs := s.Snapshot().Messages()
	wants := []string{"not a valid JSON object", "teleport", "path"}
	for i, w := range wants {
		m := msgs[2+i]
		if !m.IsError || !strings.Contains(m.Text(), w) {
			t.Errorf("result %d = %q; want an error mentioning %q", i, m.Text(), w)
		}
	}
	h.noInvalid()
}

func TestRetriesAreVisible(t *testing.T) {
	script := llmtest.Sequence(
		llmtest.Reply{Fault: llmtest.Fault429}, llmtest.Reply{Fault: llmtest.Fault500},
		llmtest.Reply{Fault: llmtest.FaultDropStream}, llmtest.Text("made it"),
	)
	h := newHarness(t, script, nil)
	s := h.session("s")
	res, err := s.Run(context.Background(), "hi")
	if err != nil || res.Answer != "made it" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if r := h.rec.kinds(EventRetry); len(r) != 3 || r[0].Retry.Status != 429 || r[1].Retry.Status != 500 {
		t.Errorf("retry events: %d", len(r))
	}
}

// A provider's "context length exceeded" 400 is not retried as is: it
// triggers emergency recovery, at most twice per turn, then fails clearly;
// with nothing left to drop it fails at once.
func TestContextLengthErrorsEndInAClearFailure(t *testing.T) {
	t.Run("nothing to drop", func(t *testing.T) {
		h := newHarness(t, llmtest.Sequence(llmtest.Reply{Fault: llmtest.FaultContextLength}), nil)
		s := h.session("s")
		res, err := s.Run(context.Background(), "hi")
		if err == nil || res.Reason != step.ReasonFailed || len(h.srv.Requests()) != 1 || !strings.Contains(err.Error(), "400") {
			t.Fatalf("Run = %+v, %v after %d requests", res, err, len(h.srv.Requests()))
		}
	})
	t.Run("two recoveries then a clear failure", func(t *testing.T) {
		script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
			if strings.Contains(req.LastHuman(), "too long") {
				if strings.Contains(req.Messages[len(req.Messages)-2].Content, "Write a summary") || strings.Contains(req.Messages[0].Content, "You summarise") {
					return llmtest.Text("summary of the reads")
				}
				return llmtest.Reply{Fault: llmtest.FaultContextLength}
			}
			if k := req.ToolResultsSinceHuman(); k < 8 {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"a.txt","offset":1,"limit":%d}`, k+1)}}}
			}
			return llmtest.Text("read")
		})
		h := newHarness(t, script, nil)
		s := h.session("s")
		if _, err := s.Run(context.Background(), "read a lot"); err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(context.Background(), "this one is too long")
		if err == nil || res.Reason != step.ReasonFailed || !strings.Contains(err.Error(), "emergency") {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		if got := len(h.rec.kinds(EventRebuild)); got == 0 {
			t.Error("no emergency rebuild happened")
		}
		h.noInvalid()
	})
}

func TestWorkspaceErrors(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(), nil)
	for _, ws := range []string{"", filepath.Join(h.ws, "missing"), filepath.Join(h.ws, "a.txt")} {
		if _, err := Create(h.cfg, "", ws, ""); err == nil {
			t.Errorf("workspace %q accepted", ws)
		}
	}
	h.session("dup")
	if _, err := Create(h.cfg, "dup", h.ws, ""); err == nil {
		t.Error("duplicate session ID accepted")
	}
	if _, err := Open(h.cfg, "nope"); err == nil || !strings.Contains(err.Error(), "tally sessions") {
		t.Errorf("Open unknown = %v", err)
	}
}

func TestTurnMetaIsStableWithinADay(t *testing.T) {
	var ws status.WorkingSet
	a := TurnMeta(day, "m", &ws)
	b := TurnMeta(day.Add(3*time.Hour), "m", &ws)
	if a != b {
		t.Error("turn_meta changed within a day")
	}
	ws.Touch("b.go", "a.go")
	c := TurnMeta(day, "m", &ws)
	ws.Touch("a.go")
	if d := TurnMeta(day, "m", &ws); c != d || !strings.Contains(c, "a.go, b.go") {
		t.Errorf("re-touching a path changed turn_meta:\n%s\n%s", c, d)
	}
	if TurnMeta(day.Add(24*time.Hour), "m", &ws) == c {
		t.Error("turn_meta did not change with the date")
	}
}

func TestPathsIn(t *testing.T) {
	got := strings.Join(status.PathsIn("Fix calc/calc.go and README.md, see https://x.io/a.html or /etc/passwd."), ",")
	if got != "calc/calc.go,README.md" {
		t.Errorf("PathsIn = %s", got)
	}
}
