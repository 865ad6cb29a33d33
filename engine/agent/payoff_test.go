package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/storage"
)

// The long session of the pay-off tests: 30 turns of 10 requests in a
// 128K window.
const (
	longTurns   = 30
	longPerTurn = 10
	longWindow  = 128_000
	// longMissHit is the miss:hit price ratio the costs are compared at
	// (DeepSeek V4 bills a miss at about 30 hits), and Tally is told
	// (longHitPrice per million hit tokens).
	longMissHit  = 30
	longHitPrice = 0.01
)

// longSummary is the summary every compaction of the long session gets,
// for Tally and for the reference client alike.
var longSummary = "The user asks, turn by turn, for a new pkg/fN.go returning N, checked. " +
	"Each turn read one lib/mK.go module, grepped lib for Scale functions, read a slice of lib/big.go, " +
	"wrote pkg/fN.go, read it back, listed a module with cat and re-read the module. Nothing failed; every turn ended done."

// longScript is the scripted model of the long session. It counts the
// requests it answers, so the sequence of tool calls is the same whatever
// the client keeps of the history: compaction summaries and hand-off briefs
// are answered apart and do not advance it.
func longScript(perTurn int) llmtest.Script {
	n := 0
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text(longSummary)
		}
		if isBriefRequest(req) {
			return llmtest.Text("<carry_forward>Decisions: one pkg/fN.go per turn. Open: none.</carry_forward>")
		}
		turn, k := n/perTurn+1, n%perTurn
		n++
		if k == perTurn-1 {
			return llmtest.Text(fmt.Sprintf("Turn %d done: wrote pkg/f%d.go and checked it.", turn, turn))
		}
		mod := fmt.Sprintf("lib/m%d.go", turn)
		calls := []llmtest.ToolCall{
			{Name: "checklist_write", Arguments: fmt.Sprintf(`{"items":[{"content":"Read %s","status":"in_progress"},{"content":"Write pkg/f%d.go"},{"content":"Check it"}]}`, mod, turn)},
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, mod)},
			{Name: "grep", Arguments: fmt.Sprintf(`{"pattern":"func Scale%d[0-9]","path":"lib"}`, turn%6)},
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"lib/big.go","offset":%d,"limit":40}`, 1+(turn*37)%400)},
			{Name: "write_file", Arguments: fmt.Sprintf(`{"path":"pkg/f%d.go","content":"package pkg\n\nfunc F%d() int {\n  return %d\n}\n"}`, turn, turn, turn)},
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/f%d.go"}`, turn)},
			{Name: "run_shell", Arguments: fmt.Sprintf(`{"command":"cat lib/m%d.go | head -60"}`, turn+40)},
			{Name: "checklist_update", Arguments: `{"id":"2","status":"completed"}`},
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, mod)},
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{calls[k%len(calls)]}}
	})
}

// longWorkspace writes the files the long session reads.
func longWorkspace(tb testing.TB, dir string) string {
	ws := codingWorkspace(dir)
	for m := 0; m <= longTurns+40; m++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package lib\n\n// Module %d keeps the conversion tables of stage %d.\n", m, m)
		for f := 0; f < 14; f++ {
			fmt.Fprintf(&b, "\n// Convert%d_%d maps a raw reading of sensor %d to millivolts.\nfunc Convert%d_%d(raw int) int {\n\treturn raw*%d/%d + %d\n}\n", m, f, f, m, f, m+f+3, f+7, m*f)
		}
		os.WriteFile(filepath.Join(ws, "lib", fmt.Sprintf("m%d.go", m)), []byte(b.String()), 0o644)
	}
	return ws
}

// longRun is what one client's run of the long session cost.
type longRun struct {
	stats llmtest.Stats
	// requests are the server's records, in order.
	requests []llmtest.Recorded
	// rebuilds are the rebuild events of an engine run.
	rebuilds []rewrite.Info
	// afterAuto holds the billed prompt tokens of the first request after
	// each automatic compaction.
	afterAuto []int
	// threshold is the compaction threshold of the run.
	threshold int
}

// inputCost is the input cost in hit-price units at longMissHit.
func (r longRun) inputCost() int { return r.stats.Hit + longMissHit*(r.stats.Prompt-r.stats.Hit) }

// busts counts the cache-busting requests the server saw: a turn request
// that hit less than half of the turn request before it (a summary call in
// between is skipped).
func (r longRun) busts() int {
	n, prev := 0, 0
	for _, q := range r.requests {
		if q.Status != 200 || isSummaryRecord(q) {
			continue
		}
		if prev > 0 && q.Hit < prev/2 {
			n++
		}
		prev = q.Prompt
	}
	return n
}

func isSummaryRecord(q llmtest.Recorded) bool {
	if len(q.Messages) == 0 {
		return false
	}
	last := q.Messages[len(q.Messages)-1].Content
	return strings.Contains(last, summaryMarker) || strings.Contains(q.Messages[0].Content, flatMarker)
}

// runLong drives the long session under a cache rule, through Tally's
// engine or, with reference set, through the reference client.
func runLong(tb testing.TB, rule llmtest.CacheRule, reference bool) longRun {
	return runLongWith(tb, rule, reference, false)
}

// runLongWith is runLong; noFacts runs Tally with compactions that keep
// only what they kept before the facts (compact.Input.NoFacts).
func runLongWith(tb testing.TB, rule llmtest.CacheRule, reference, noFacts bool) longRun {
	tb.Helper()
	threshold := compact.Threshold(longWindow, true)
	s, srv, rec := newLongSession(tb, rule, func(cfg *Config) {
		cfg.NoCompactionFacts = noFacts
		if reference {
			cfg.Model = &referenceClient{next: cfg.Model, threshold: threshold}
			cfg.Compaction, cfg.CycleAt = rewrite.Off, -1
			cfg.ContextWindow = 10 * longWindow
		}
	})
	runCodingTurns(tb, s, srv, longTurns)
	out := longRun{stats: srv.Stats(), requests: srv.Requests(), threshold: threshold}
	for _, e := range rec.kinds(EventRebuild) {
		out.rebuilds = append(out.rebuilds, *e.Rebuild)
	}
	out.afterAuto = billedAfter(tb, s, "auto compaction")
	return out
}

// newLongSession opens the long session's scripted server, store and
// workspace (closed at the end of the test) and creates the session with
// the long run's config, changed by edit.
func newLongSession(tb testing.TB, rule llmtest.CacheRule, edit func(*Config)) (*Session, *llmtest.Server, *recorder) {
	tb.Helper()
	srv := llmtest.New(longScript(longPerTurn), llmtest.WithTemplate(llmtest.TemplateDeepSeekV4), llmtest.WithCacheRule(rule))
	tb.Cleanup(srv.Close)
	dir := tb.TempDir()
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ws := longWorkspace(tb, dir)
	rec := &recorder{}
	cfg := Config{Store: st, ModelChoice: ModelChoice{Model: llm.NewOpenAI(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), ModelName: "deepseek-chat",
		ContextWindow: longWindow, HitPrice: longHitPrice, MissPrice: longHitPrice * longMissHit},
		Approver: tool.ApproveAll{}, Now: steppingClock(), NoDiagnostics: true, OnEvent: rec.on}
	if edit != nil {
		edit(&cfg)
	}
	s, err := Create(cfg, "long", ws, "")
	if err != nil {
		tb.Fatal(err)
	}
	return s, srv, rec
}

// billedAfter returns the billed prompt tokens of the first turn request
// after each rebuild of s for reason: the level the rebuild left, in the
// provider's count.
func billedAfter(tb testing.TB, s *Session, reason string) []int {
	tb.Helper()
	rows, err := s.Audit().Ledger()
	if err != nil {
		tb.Fatal(err)
	}
	var out []int
	for _, r := range rows {
		if r.Rebuild == reason {
			out = append(out, r.PromptTokens)
		}
	}
	return out
}

// referenceClient is the append-only client Tally is compared with: it
// sends the engine's requests unchanged (the engine runs with compaction
// and cycles off, so they only ever grow by appending) until the next one
// would reach the threshold; then it compacts once, deeply, by summary: one
// flattened summary request, after which it sends the summary in the system
// prompt, the user's latest request and the last compact.KeepRecent
// messages, and appends to that again.
type referenceClient struct {
	next      llm.Model
	threshold int
	// cut is the index of the engine message from which the history is
	// sent; head holds the messages kept before it (the user's request).
	cut     int
	head    []chat.Message
	summary string
	// sent is the number of engine messages in the last request and
	// billed its prompt tokens.
	sent, billed int
}

func (c *referenceClient) Stream(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
	msgs := req.Messages
	if c.cut == 0 {
		c.cut = 1
	}
	// The level as Tally measures it: the provider's count of the last
	// request plus estimates of what was appended since.
	level := c.billed
	for i := max(c.sent-1, c.cut); i < len(msgs) && c.billed > 0; i++ {
		level += tokens.Count(msgs[i].Content) + tokens.MessageOverhead
	}
	if level >= c.threshold {
		if err := c.compact(ctx, req); err != nil {
			return nil, err
		}
	}
	out := req
	sys := msgs[0]
	if c.summary != "" {
		sys.Content += "\n\n" + compact.SummarySection(c.summary)
	}
	out.Messages = append(append([]chat.Message{sys}, c.head...), msgs[c.cut:]...)
	resp, err := c.next.Stream(ctx, out, cb)
	if err == nil && resp.HasUsage {
		c.sent, c.billed = len(msgs), resp.Usage.PromptTokens
	}
	return resp, err
}

// compact summarises the engine messages before the last KeepRecent with
// one flattened request, as Tally's own summary request for windows under
// compact.CacheAlignedMinWindow does.
func (c *referenceClient) compact(ctx context.Context, req llm.Request) error {
	msgs := req.Messages
	keep := max(len(msgs)-compact.KeepRecent, c.cut)
	for keep > c.cut && msgs[keep].Role == chat.RoleTool {
		keep--
	}
	human := -1
	for i := len(msgs) - 1; i > 0; i-- {
		if msgs[i].Role == chat.RoleUser && !llmtest.IsInjected(msgs[i].Content) {
			human = i
			break
		}
	}
	var b strings.Builder
	if c.summary != "" {
		b.WriteString("Summary from an earlier compaction, which the transcript continues:\n\n" + c.summary + "\n\n")
	}
	b.WriteString("Transcript to summarise:\n\n")
	for _, m := range append(append([]chat.Message(nil), c.head...), msgs[c.cut:keep]...) {
		text := m.Content
		if r := []rune(text); len(r) > compact.FlatToolChars {
			text = string(r[:compact.FlatToolChars/2]) + "\n[…]\n" + string(r[len(r)-compact.FlatToolChars/2:])
		}
		for _, tc := range m.ToolCalls {
			text += "\ncalled " + tc.Name + " " + tc.Arguments
		}
		fmt.Fprintf(&b, "%s: %s\n\n", m.Role, text)
	}
	b.WriteString("---\n\n" + strings.TrimSpace(compact.SummaryInstruction))
	sreq := llm.Request{Model: req.Model, MaxTokens: compact.SummaryTokens, Messages: []chat.Message{
		{Role: chat.RoleSystem, Content: strings.TrimSpace(compact.SummarySystemPrompt)},
		{Role: chat.RoleUser, Content: b.String()},
	}}
	resp, err := c.next.Stream(ctx, sreq, llm.Callbacks{})
	if err != nil {
		return err
	}
	c.summary = resp.Content
	c.head = nil
	if human >= 0 && human < keep {
		c.head = []chat.Message{msgs[human]}
	} else if human >= keep {
		keep = human
	}
	c.cut = keep
	c.billed = 0
	return nil
}

// TestCompactionPaysForItself drives the long session through Tally and
// through the reference client under each cache rule of the simulated
// provider, and compares what they cost.
func TestCompactionPaysForItself(t *testing.T) {
	if testing.Short() {
		t.Skip("300-request sessions")
	}
	t.Parallel() // a long measured session: the others run beside it
	for _, rule := range []llmtest.CacheRule{llmtest.CacheLCP, llmtest.CacheUnits} {
		t.Run(rule.String(), func(t *testing.T) {
			tally := runLong(t, rule, false)
			bare := runLongWith(t, rule, false, true)
			ref := runLong(t, rule, true)
			for _, r := range []struct {
				name string
				run  longRun
			}{{"tally", tally}, {"tally without facts", bare}, {"reference", ref}} {
				s := r.run.stats
				t.Logf("%s: %d requests, %d prompt tokens, %d hit (%.2f%%), input cost %d hit-units, %d cache-busting requests, %d rebuilds",
					r.name, s.Accepted, s.Prompt, s.Hit, 100*float64(s.Hit)/float64(s.Prompt), r.run.inputCost(), r.run.busts(), len(r.run.rebuilds))
			}
			for _, rb := range tally.rebuilds {
				t.Logf("tally rebuild %q: %d → %d tokens, %d billed as misses once, pays back after %.1f requests",
					rb.Reason, rb.TokensBefore, rb.TokensAfter, rb.MissTokens, rb.PaysBackAfter)
			}
			t.Logf("billed after each automatic compaction: %v (limit %d)", tally.afterAuto, compact.Limit(tally.threshold))
			// What compaction keeps by construction (the user's words, the
			// work record, the dropped index) may cost at most 5 % more;
			// without it Tally must not cost more than the reference.
			if bare.inputCost() > ref.inputCost() {
				t.Errorf("tally's input cost without facts %d is more than the reference client's %d", bare.inputCost(), ref.inputCost())
			}
			if limit := bare.inputCost() * 105 / 100; tally.inputCost() > limit {
				t.Errorf("tally's input cost %d is more than 5 %% over its cost without facts %d", tally.inputCost(), bare.inputCost())
			}
			t.Logf("the facts cost %+.1f %% (%d → %d hit-units)", 100*float64(tally.inputCost()-bare.inputCost())/float64(bare.inputCost()), bare.inputCost(), tally.inputCost())
			if b, n := tally.busts(), tally.stats.Accepted; b*100 > 2*n {
				t.Errorf("%d cache-busting requests in %d; want at most 2 per 100", b, n)
			}
			if len(tally.afterAuto) == 0 {
				t.Error("tally never compacted")
			}
			for _, n := range tally.afterAuto {
				if limit := compact.Limit(tally.threshold); n > limit {
					t.Errorf("an automatic compaction left %d tokens, within %.0f %% of the threshold %d", n, 100*compact.ThresholdMargin, tally.threshold)
				}
			}
		})
	}
}

// TestAutoCompactionLeavesRoom: a read-heavy session in a 32K window
// crosses the threshold again and again. Every automatic compaction must
// leave the level at least 10 % under the threshold, as the provider
// counts it on the next request, and none may bust the cache more than
// twice in a turn.
func TestAutoCompactionLeavesRoom(t *testing.T) {
	n := 0
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text("Summary: the fixtures f0-f11 were read in slices; nothing was changed.")
		}
		if isBriefRequest(req) {
			return llmtest.Text("<carry_forward>Keep reading the fixtures in slices.</carry_forward>")
		}
		k := n
		n++
		if k%10 == 9 {
			return llmtest.Text("read ten slices")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.txt","offset":%d}`, k%12, 1+k/12)}}}
	})
	sw := newSmallWindow(t, 32_000, script)
	s := sw.session("room")
	for turn := 0; turn < 8; turn++ {
		if _, err := s.Run(context.Background(), "Read ten more slices."); err != nil {
			t.Fatal(err)
		}
	}
	sw.checkRequests(t)
	after := billedAfter(t, s, "auto compaction")
	compactAt := s.Snapshot().CompactAt
	if len(after) == 0 {
		t.Fatal("no automatic compaction happened")
	}
	for _, got := range after {
		if limit := compact.Limit(compactAt); got > limit {
			t.Errorf("an automatic compaction left %d tokens; the limit is %d, %.0f %% under the threshold %d", got, limit, 100*compact.ThresholdMargin, compactAt)
		}
	}
	busting := map[int]int{}
	turn := 0
	for _, e := range sw.rec.events {
		switch {
		case e.Kind == EventTurnStart:
			turn++
		case e.Kind == EventRebuild && e.Rebuild.CacheBusting:
			busting[turn]++
		}
		if e.Kind == EventRebuild && e.Reason == "auto compaction" {
			if r := e.Rebuild; !r.CacheBusting || r.MissTokens <= 0 || r.PaysBackAfter <= 0 {
				t.Errorf("the rebuild event does not say what the compaction cost: %+v", *r)
			}
		}
	}
	for tn, b := range busting {
		if b > compact.ThrashTurnLimit {
			t.Errorf("turn %d rewrote cached history %d times", tn, b)
		}
	}
	t.Logf("billed after each automatic compaction: %v; cache-busting rewrites per turn: %v", after, busting)
}

// TestPreviewSaysWhenItPaysBack: the preview of a manual compaction prices
// it in cache terms and weighs its break-even against the requests
// expected before the ceiling.
func TestPreviewSaysWhenItPaysBack(t *testing.T) {
	n := 0
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if n++; n%5 == 0 {
			return llmtest.Text("read four files")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.txt"}`, n%12)}}}
	})
	sw := newSmallWindow(t, 128_000, script)
	sw.cfg.HitPrice, sw.cfg.MissPrice = 0.01, 0.3
	s := sw.session("preview")
	for turn := 0; turn < 3; turn++ {
		if _, err := s.Run(context.Background(), "Read four files."); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := s.Compaction().Preview()
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Cache
	if c.MissTokens <= 0 || c.BreakEven <= 0 || c.Horizon <= 0 || c.MissHitRatio != 30 {
		t.Fatalf("cache = %+v", c)
	}
	text := plan.Text()
	for _, want := range []string{"billed as misses once", "it pays back after", "expected before the ceiling", "a miss costs 30.0× a hit"} {
		if !strings.Contains(text, want) {
			t.Errorf("the preview does not say %q:\n%s", want, text)
		}
	}
}
