package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/diag"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/storage"
)

// deepSeekPrice is DeepSeek's list price per million tokens, used to put a
// dollar figure on the comparison.
var deepSeekPrice = ledger.Price{CacheHit: 0.028, CacheMiss: 0.28, Completion: 0.42}

// codingSession is a scripted model for a long coding session: every turn
// plans a checklist, reads and greps, writes a Go file (which triggers
// diagnostics), re-reads, runs a command, ticks the checklist and answers.
func codingSession(perTurn int) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		k := req.ToolResultsSinceHuman()
		turn := strings.Count(strings.Join(humanTexts(req), "\n"), "Turn ")
		if k >= perTurn-1 {
			return llmtest.Text(fmt.Sprintf("Turn %d done: updated pkg/f%d.go and checked it.", turn, turn))
		}
		calls := []llmtest.ToolCall{
			{Name: "checklist_write", Arguments: fmt.Sprintf(`{"items":[{"content":"Read the code for turn %d","status":"in_progress"},{"content":"Write pkg/f%d.go"},{"content":"Check it"}]}`, turn, turn)},
			{Name: "read_file", Arguments: `{"path":"lib/big.go"}`},
			{Name: "grep", Arguments: `{"pattern":"func Scale1[0-9]","path":"lib"}`},
			{Name: "checklist_update", Arguments: `{"id":"2","status":"in_progress"}`},
			{Name: "write_file", Arguments: fmt.Sprintf(`{"path":"pkg/f%d.go","content":"package pkg\n\nfunc F%d() int {\n  return %d\n}\n"}`, turn, turn, turn)},
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/f%d.go"}`, turn)},
			{Name: "run_shell", Arguments: `{"command":"ls pkg | wc -l"}`},
			{Name: "todo_update", Arguments: `{"id":"3","status":"in_progress"}`},
			{Name: "read_file", Arguments: `{"path":"lib/big.go","offset":100,"limit":40}`},
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{calls[k%len(calls)]}}
	})
}

func humanTexts(req *llmtest.Req) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == "user" && !llmtest.IsInjected(m.Content) {
			out = append(out, m.Content)
		}
	}
	return out
}

// naiveModel sends what a naive client would: the clock and the current
// status inlined in the system prompt, and older tool results re-trimmed
// every turn, rebuilt from its state instead of appended.
func naiveModel(next llm.Model, now func() time.Time) llm.Model {
	return llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		msgs := append([]chat.Message(nil), req.Messages...)
		// Take the status off the end of the last message (it may be
		// joined to the user's text) to inline it in the system prompt.
		last := &msgs[len(msgs)-1]
		cut := strings.LastIndex(last.Content, "<agent_status")
		status := last.Content[cut:]
		last.Content = strings.TrimSpace(last.Content[:cut])
		if last.Content == "" {
			msgs = msgs[:len(msgs)-1]
		}
		msgs[0].Content = fmt.Sprintf("Current time: %s\n\n%s\n\nCurrent status:\n%s", now().Format(time.RFC3339Nano), msgs[0].Content, status)
		lastHuman := 0
		for i, m := range msgs {
			if m.Role == "user" && !llmtest.IsInjected(m.Content) {
				lastHuman = i
			}
		}
		for i := 1; i < lastHuman; i++ {
			if m := &msgs[i]; m.Role == "tool" && len(m.Content) > 400 {
				m.Content = fmt.Sprintf("%s… [%d chars trimmed, %d messages ago]", m.Content[:400], len(m.Content)-400, len(msgs)-i)
			}
		}
		req.Messages = msgs
		return next.Stream(ctx, req, cb)
	})
}

type cacheRun struct {
	stats       llmtest.Stats
	cost        float64
	diagnostics int // <diagnostics> messages in the last request
}

// runSession drives turns × perTurn requests through the engine against a
// fresh simulated DeepSeek cache, optionally through the naive assembly.
func runSession(tb testing.TB, turns, perTurn int, naive bool) cacheRun {
	return runSessionWith(tb, turns, perTurn, sessionRun{naive: naive})
}

// sessionRun selects the client and the cache simulation of a run.
type sessionRun struct {
	naive     bool
	placement status.Placement  // "" is the engine's default (tail)
	rule      llmtest.CacheRule // the simulated provider cache
}

func runSessionWith(tb testing.TB, turns, perTurn int, o sessionRun) cacheRun {
	tb.Helper()
	naive := o.naive
	srv := llmtest.New(codingSession(perTurn), llmtest.WithTemplate(llmtest.TemplateDeepSeekV4), llmtest.WithCacheRule(o.rule))
	defer srv.Close()
	dir := tb.TempDir()
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ws := codingWorkspace(dir)
	now := steppingClock()
	var model llm.Model = llm.NewOpenAI(llm.Config{BaseURL: srv.URL(), APIKey: "k"})
	if naive {
		model = naiveModel(model, now)
	}
	// gofmt only: go vet on every write would make the test slow without
	// changing what the cache sees (one <diagnostics> message either way).
	rules := []diag.Rule{{Ext: ".go", Commands: []diag.Command{{Name: "gofmt", Args: []string{"gofmt", "-l", diag.Files}, Explain: "file is not gofmt-formatted"}}}}
	cfg := Config{Store: st, ModelChoice: ModelChoice{Model: model, ModelName: "deepseek-chat"}, Approver: tool.ApproveAll{}, Now: now, DiagRules: rules, StatusMode: o.placement}
	s, err := Create(cfg, "cache", ws, "")
	if err != nil {
		tb.Fatal(err)
	}
	runCodingTurns(tb, s, srv, turns)
	stt := srv.Stats()
	reqs := srv.Requests()
	diags := 0
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.HasPrefix(m.Content, "<diagnostics>") {
			diags++
		}
	}
	return cacheRun{stats: stt, cost: deepSeekPrice.Cost(stt.Hit, stt.Prompt-stt.Hit, stt.Completion), diagnostics: diags}
}

// TestCacheDisciplineAgainstNaiveClient runs a 300-request coding session
// (status, turn_meta, diagnostics and checklist traffic included) through
// Tally's engine and through a naive assembly over the same simulated
// cache.
func TestCacheDisciplineAgainstNaiveClient(t *testing.T) {
	if testing.Short() {
		t.Skip("300-request session")
	}
	t.Parallel() // a long measured session: the others run beside it
	tally := runSession(t, 30, 10, false)
	naive := runSession(t, 30, 10, true)
	for _, r := range []struct {
		name string
		run  cacheRun
	}{{"tally", tally}, {"naive", naive}} {
		s := r.run.stats
		t.Logf("%s: %d requests, %d prompt tokens, %d hit (%.2f%%), ideal %d, hit/ideal %.2f%%, cost $%.4f",
			r.name, s.Accepted, s.Prompt, s.Hit, 100*float64(s.Hit)/float64(s.Prompt), s.Ideal, 100*float64(s.Hit)/float64(s.Ideal), r.run.cost)
	}
	if tally.stats.Accepted != 300 || naive.stats.Accepted != 300 {
		t.Fatalf("tally made %d requests and the naive client %d; want 300 each", tally.stats.Accepted, naive.stats.Accepted)
	}
	if tally.diagnostics == 0 {
		t.Error("the session produced no <diagnostics> message; the write step is not exercising it")
	}
	if ratio := float64(tally.stats.Hit) / float64(tally.stats.Ideal); ratio < 0.99 {
		t.Errorf("tally's hit tokens are %.2f%% of the ideal; want >= 99%%", 100*ratio)
	}
	if ratio := float64(naive.stats.Hit) / float64(naive.stats.Ideal); ratio > 0.5 {
		t.Errorf("the naive client reached %.2f%% of the ideal; the comparison is not naive", 100*ratio)
	}
}

// BenchmarkCacheVsNaive reports the same comparison as metrics: run with
// go test ./engine/agent -run '^$' -bench CacheVsNaive -benchtime 1x
func BenchmarkCacheVsNaive(b *testing.B) {
	for _, naive := range []bool{false, true} {
		name := "tally"
		if naive {
			name = "naive"
		}
		b.Run(name, func(b *testing.B) {
			var r cacheRun
			for i := 0; i < b.N; i++ {
				r = runSession(b, 30, 10, naive)
			}
			s := r.stats
			b.ReportMetric(100*float64(s.Hit)/float64(s.Prompt), "hit%")
			b.ReportMetric(100*float64(s.Hit)/float64(s.Ideal), "of-ideal%")
			b.ReportMetric(float64(s.Prompt)/1e3, "kprompt-tokens")
			b.ReportMetric(r.cost, "usd")
		})
	}
}

// steppingClock is a test clock that advances 1.3 s at every reading.
func steppingClock() func() time.Time {
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return func() time.Time { clock = clock.Add(1300 * time.Millisecond); return clock }
}

// runCodingTurns runs the scripted coding session's turns through s and
// fails if the strict server rejected any request.
func runCodingTurns(tb testing.TB, s *Session, srv *llmtest.Server, turns int) {
	tb.Helper()
	for turn := 1; turn <= turns; turn++ {
		if _, err := s.Run(context.Background(), fmt.Sprintf("Turn %d: add pkg/f%d.go with F%d returning %d, then check it.", turn, turn, turn, turn)); err != nil {
			tb.Fatalf("turn %d: %v", turn, err)
		}
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		tb.Fatalf("server rejected a request: %s", bad[0].Error)
	}
}

// codingWorkspace writes the Go module the scripted coding sessions work
// in, under dir, and returns its path.
func codingWorkspace(dir string) string {
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "lib"), 0o755)
	os.MkdirAll(filepath.Join(ws, "pkg"), 0o755)
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module ws\n\ngo 1.22\n"), 0o644)
	var src strings.Builder
	src.WriteString("package lib\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&src, "\n// Scale%d multiplies v by %d and clamps it.\nfunc Scale%d(v, lo, hi int) int {\n\tr := v * %d\n\tif r < lo {\n\t\treturn lo\n\t}\n\treturn min(r, hi)\n}\n", i, i+2, i, i+2)
	}
	os.WriteFile(filepath.Join(ws, "lib", "big.go"), []byte(src.String()), 0o644)
	return ws
}
