package rewrite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/storage"
)

// host is a conversation for the rewrite sources: a log, a level and a
// window, with every rewrite it is asked for recorded.
type host struct {
	log      *transcript.AppendLog
	state    State
	anchor   tokens.Anchor
	level    int
	window   int
	rebuilds []Request
	warnings []string
	notices  []Notice
	inputs   int       // how many times the compaction input was built (WorkingSet reads)
	model    llm.Model // what Metered gives; nil by default
}

func newHost(window, level int) *host {
	return &host{log: transcript.NewAppendLog(nil, transcript.WireRules{}), window: window, level: level}
}

func (h *host) Log() *transcript.AppendLog       { return h.log }
func (h *host) State() *State                    { return &h.state }
func (h *host) Level() (int, bool)               { return h.level, false }
func (h *host) Anchor() *tokens.Anchor           { return &h.anchor }
func (h *host) PrefixTokens() int                { return 1000 }
func (h *host) Window() (int, bool)              { return h.window, true }
func (h *host) Model() Model                     { return Model{Name: "m", HitPrice: 0.1, MissPrice: 3} }
func (h *host) Requests() int                    { return 10 }
func (h *host) Now() time.Time                   { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
func (h *host) Meta() storage.Session            { return storage.Session{ID: "s", Cycle: 1} }
func (h *host) WorkingSet() []string             { h.inputs++; return nil }
func (h *host) Checklist() []todo.Item           { return nil }
func (h *host) System() string                   { return "system" }
func (h *host) Catalog() []chat.Tool             { return nil }
func (h *host) Metered(ledger.Kind) llm.Model    { return h.model }
func (h *host) Warn(msg string)                  { h.warnings = append(h.warnings, msg) }
func (h *host) Soon(n Notice)                    { h.notices = append(h.notices, n) }
func (h *host) PreCompact(context.Context, bool) {}
func (h *host) Compacted(context.Context, bool)  {}
func (h *host) SubagentLines() []string          { return nil }
func (h *host) Rebuild(r Request) (Info, error) {
	h.rebuilds = append(h.rebuilds, r)
	return Info{Kind: r.Kind, Reason: r.Reason}, nil
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, "ask": Ask, "off": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("sometimes"); err == nil || !strings.Contains(err.Error(), "not auto, ask or off") {
		t.Errorf("ParseMode(sometimes) = %v", err)
	}
}

// The level the context is kept under never passes the window's own
// threshold, whatever the setting asks.
func TestKeepUnderIsCappedByTheWindow(t *testing.T) {
	h := newHost(128_000, 0)
	own, cycleAt := NewSession(h, Options{}).Thresholds()
	if own <= 0 || cycleAt <= own {
		t.Fatalf("window thresholds %d, %d", own, cycleAt)
	}
	if got, _ := NewSession(h, Options{KeepUnder: 64_000}).Thresholds(); got != min(64_000, own) {
		t.Errorf("keep under 64K: %d; want %d", got, min(64_000, own))
	}
	if got, _ := NewSession(h, Options{KeepUnder: 10_000_000}).Thresholds(); got != own {
		t.Errorf("keep under 10M: %d; want the window's %d", got, own)
	}
	auto := NewSession(h, Options{KeepUnder: KeepAuto})
	auto.Publish()
	if got, _ := auto.Thresholds(); got <= 0 || got > own {
		t.Errorf("auto level %d; want one in (0, %d]", got, own)
	}
	if opts := auto.KeepForecast(); len(opts) < 2 || opts[0].KeepUnder != KeepAuto || opts[1].KeepUnder != 0 {
		t.Errorf("forecast choices %+v; want Auto, then the window's default first", opts)
	}
}

// "Not now" holds back one automatic compaction until the level rises a
// PostponeStep of the threshold past it; the ceiling always runs it.
func TestPostponeHoldsOneCompaction(t *testing.T) {
	r := NewSession(newHost(128_000, 0), Options{})
	const at = 60_000
	r.Postpone(at - StatusReserve)
	until := at + int(float64(at)*PostponeStep)
	if !r.notice.postponed(at, at, false) {
		t.Fatal("a postponed compaction ran at the threshold")
	}
	if r.notice.postponed(at, at, true) {
		t.Fatal("the ceiling did not run a postponed compaction")
	}
	r.Postpone(at - StatusReserve)
	if r.notice.postponed(until, at, false) {
		t.Fatal("the postponement outlived its step")
	}
	if r.notice.postponed(at, at, false) {
		t.Fatal("the postponement skipped a second compaction")
	}
}

// A step over the threshold while "Not now" holds reads and plans nothing:
// the compaction input is built only once the postponement ends.
func TestPostponedStepBuildsNoInput(t *testing.T) {
	h := newHost(128_000, 0)
	call := transcript.ToolCall{ID: "c", Name: "run_shell", Arguments: `{"command":"ls"}`}
	h.log.Append(transcript.UserText("", "go", h.Now()))
	h.log.Append(transcript.AssistantReply("", "", []transcript.ToolCall{call}, h.Now()))
	h.log.Append(transcript.ToolResult(call, strings.Repeat("output line\n", 4000), false, h.Now()))
	r := NewSession(h, Options{})
	compactAt, _ := r.Thresholds()
	h.level = compactAt
	r.Postpone(h.level)
	for range 3 {
		if err := r.BeforeRequest(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if h.inputs != 0 || len(h.rebuilds) != 0 {
		t.Fatalf("postponed steps built the compaction input %d times and rewrote %d times", h.inputs, len(h.rebuilds))
	}
	h.level = compactAt + int(float64(compactAt)*PostponeStep) + 1
	if err := r.BeforeRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.inputs == 0 {
		t.Error("past the postponement's end the compaction input was never built")
	}
}

func TestNoticePercent(t *testing.T) {
	if p := (Notice{Level: 91, Threshold: 100}).Percent(); p != 91 {
		t.Errorf("percent %d", p)
	}
	if p := (Notice{Level: 5}).Percent(); p != 0 {
		t.Errorf("percent without a threshold %d", p)
	}
}

// An empty conversation has nothing to compact, purge or archive, and no
// rewrite reaches the log.
func TestEmptyConversationIsLeftAlone(t *testing.T) {
	h := newHost(128_000, 0)
	r := NewSession(h, Options{})
	if _, err := r.Preview(); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("Preview() = %v", err)
	}
	if _, err := r.Compact(context.Background()); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("Compact() = %v", err)
	}
	if err := r.NewCycle(context.Background()); err == nil {
		t.Error("an empty cycle was archived")
	}
	if _, err := r.PreviewPurge(context.Background()); err == nil {
		t.Error("an empty conversation was purged")
	}
	if err := r.ApplyPurge(PurgePreview{}); err == nil || !strings.Contains(err.Error(), "preview it again") {
		t.Errorf("ApplyPurge of a stale preview = %v", err)
	}
	if err := r.BeforeRequest(context.Background()); err != nil {
		t.Errorf("BeforeRequest() = %v", err)
	}
	if len(h.rebuilds) != 0 {
		t.Errorf("rewrites asked for: %+v", h.rebuilds)
	}
}

// An idle pause clears stale tool results through the one rebuild; a
// short pause, or compaction switched off, does nothing.
func TestIdleMicroCompactsAfterAPause(t *testing.T) {
	fill := func(pause time.Duration) *host {
		h := newHost(128_000, 0)
		at := h.Now().Add(-pause)
		long := strings.Repeat("output line\n", 2000)
		for i := range 12 {
			call := transcript.ToolCall{ID: "call" + string(rune('a'+i)), Name: "run_shell", Arguments: `{"command":"ls"}`}
			h.log.Append(transcript.AssistantReply("", "", []transcript.ToolCall{call}, at))
			h.log.Append(transcript.ToolResult(call, long, false, at))
		}
		h.log.Append(transcript.AssistantReply("done", "", nil, at))
		return h
	}
	short := fill(time.Second)
	if err := NewSession(short, Options{}).IdleMicro(); err != nil || len(short.rebuilds) != 0 {
		t.Fatalf("a second's pause: %v, %d rewrites", err, len(short.rebuilds))
	}
	off := fill(compact.MicroIdle + time.Minute)
	if err := NewSession(off, Options{Mode: Off}).IdleMicro(); err != nil || len(off.rebuilds) != 0 {
		t.Fatalf("compaction off: %v, %d rewrites", err, len(off.rebuilds))
	}
	idle := fill(compact.MicroIdle + time.Minute)
	if err := NewSession(idle, Options{}).IdleMicro(); err != nil {
		t.Fatal(err)
	}
	if len(idle.rebuilds) != 1 || idle.rebuilds[0].Kind != Compaction || idle.rebuilds[0].Reason != "idle micro-compact" {
		t.Fatalf("after an idle pause: %+v; want one idle micro-compact", idle.rebuilds)
	}
	if n := len(idle.rebuilds[0].Messages); n != idle.log.Len() {
		t.Errorf("the micro layer changed the message count (%d of %d); it only clears results", n, idle.log.Len())
	}
}

// The price-aware level is computed once the growth has been measured
// over levelRequests requests, holds while the context only grows however
// the measured growth wanders, and is computed again after a rewrite
// lowered the level, once the growth is measured again.
func TestPriceAwareLevelHoldsBetweenCompactions(t *testing.T) {
	h := newHost(128_000, 20_000)
	r := NewSession(h, Options{KeepUnder: KeepAuto})
	own, _ := r.defaultLevels()
	level := func(growth float64, at, span int) int {
		h.state.Breakers.Growth = compact.Growth{Set: true, Last: growth}
		h.state.CycleRequests, h.level = span, at
		r.Publish()
		got, _ := r.Thresholds()
		return got
	}
	if got := level(300, 20_000, levelRequests-1); got != own {
		t.Fatalf("a growth measured over %d requests set the level to %d; want the window's %d", levelRequests-1, got, own)
	}
	first := level(300, 20_000, levelRequests)
	if first == own {
		t.Fatalf("the level stayed the window's %d under a growth of 300 a request", own)
	}
	for i, g := range []float64{3_000, 60, 900} {
		if got := level(g, 21_000+1_000*i, levelRequests+10*(i+1)); got != first {
			t.Fatalf("the level moved from %d to %d while the context grew (growth %.0f)", first, got, g)
		}
		if o := r.KeepForecast()[0]; o.KeepUnder != KeepAuto || o.Level != first {
			t.Fatalf("the preview offers Auto at %d; the level in force is %d", o.Level, first)
		}
	}
	if got := level(320, 22_300, levelRequests+40); got != first { // the provider's count corrects ours a little
		t.Fatalf("the level moved from %d to %d on a small correction of the count", first, got)
	}
	if got := level(0, 9_000, 0); got != first { // a compaction; its growth is not measured yet
		t.Fatalf("the level moved from %d to %d before anything new was known", first, got)
	}
	if got := level(3_000, 9_500, levelRequests/2); got != first { // measured over too few requests yet
		t.Fatalf("the level moved from %d to %d on a growth measured over %d requests", first, got, levelRequests/2)
	}
	after := level(3_000, 9_500, levelRequests) // measured again after the compaction
	if after == first {
		t.Fatalf("the level stayed %d after a rewrite under a much faster growth", after)
	}
	long := r.budget.Load().at
	if long.Requests != compact.MaxHorizon || after != min(compact.Budget(long), long.Threshold) {
		t.Errorf("after the rewrite the level is %d; the budget over %v requests is %d", after, long.Requests, compact.Budget(long))
	}
}

// The gauge says why compaction triggers under the window's threshold:
// the price-aware level or the user's; nothing at the window's own.
func TestKeepReasonNamesTheLevelAndWhy(t *testing.T) {
	h := newHost(128_000, 20_000)
	h.state.Breakers.Growth = compact.Growth{Set: true, Last: 300}
	h.state.CycleRequests = levelRequests
	auto := NewSession(h, Options{KeepUnder: KeepAuto})
	auto.Publish()
	at, _ := auto.Thresholds()
	if got := auto.KeepReason(); !strings.Contains(got, "keeps the context under ") || !strings.HasSuffix(got, "the cheapest level at this model's prices") || !strings.Contains(got, text.Thousands(at)) {
		t.Errorf("auto: %q (level %d)", got, at)
	}
	if got := NewSession(h, Options{KeepUnder: 40_000}).KeepReason(); got != "keeps the context under 40,000 tokens: the level you chose" {
		t.Errorf("a chosen level: %q", got)
	}
	if got := NewSession(h, Options{}).KeepReason(); got != "" {
		t.Errorf("the window's threshold: %q", got)
	}
}

// In a small window a long brief is asked for no more than the new
// cycle's seed can hold and cut to fit, so the new cycle starts under the
// compaction level instead of rolling again at its first request.
func TestALongBriefIsCutToFitTheNewCycle(t *testing.T) {
	h := newHost(8_000, 0)
	asked := 0
	h.model = llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		asked = req.MaxTokens
		return &llm.Response{Content: "<carry_forward>" + strings.Repeat("The parser still fails on unary minus. ", 400) + "</carry_forward>"}, nil
	})
	h.log.Append(transcript.UserText("", "fix the parser", h.Now()))
	h.log.Append(transcript.AssistantReply("Looking.", "", nil, h.Now()))
	r := NewSession(h, Options{})
	room := r.seedRoom()
	if err := r.NewCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if asked <= 0 || asked > room {
		t.Errorf("the brief was asked for %d tokens; the seed holds %d", asked, room)
	}
	if len(h.rebuilds) != 1 {
		t.Fatalf("%d rebuilds; want the cycle's", len(h.rebuilds))
	}
	rb := h.rebuilds[0]
	if got := seedTokens(rb.Messages); got > room {
		t.Errorf("the new cycle's seed holds %d tokens; room for %d", got, room)
	}
	if !strings.Contains(rb.Summary, "[brief cut at ") {
		t.Errorf("the brief was not cut: %d tokens", tokens.Count(rb.Summary))
	}
}
