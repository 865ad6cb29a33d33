package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/purge"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// fakeOps stands in for the engine in the compaction, purge and archive
// views. It is called off the UI goroutine, hence the mutex.
type fakeOps struct {
	mu        sync.Mutex
	plan      compact.Plan
	msgs      []transcript.Message
	archives  []cycle.Archive
	purgePlan agent.PurgePreview
	compacted int
	purged    int
	cycles    int
	emit      func(agent.Event) // the session's OnEvent
	alerts    []string
	postponed int // PostponeCompaction calls
}

func (f *fakeOps) PreviewCompaction() (compact.Plan, error) { return f.plan, nil }
func (f *fakeOps) Compact(ctx context.Context) (agent.CompactionResult, error) {
	f.mu.Lock()
	f.compacted++
	f.mu.Unlock()
	f.emit(agent.Event{Kind: agent.EventRebuild, Reason: "manual compaction", Rebuild: &agent.RebuildInfo{
		Kind: agent.RebuildCompaction, Reason: "manual compaction", TokensBefore: 84_200, TokensAfter: 21_000, Summary: "We fixed calc.Add; tests pass."}})
	return agent.CompactionResult{Applied: true, TokensBefore: 84_200, TokensAfter: 21_000}, nil
}
func (f *fakeOps) Archives() ([]cycle.Archive, error) { return f.archives, nil }
func (f *fakeOps) NewCycle(ctx context.Context) error {
	f.mu.Lock()
	f.cycles++
	f.mu.Unlock()
	return nil
}
func (f *fakeOps) PreviewPurge(ctx context.Context) (agent.PurgePreview, error) {
	return f.purgePlan, nil
}
func (f *fakeOps) ApplyPurge(p agent.PurgePreview) error {
	f.mu.Lock()
	f.purged++
	f.mu.Unlock()
	f.emit(agent.Event{Kind: agent.EventRebuild, Reason: "purge", Rebuild: &agent.RebuildInfo{
		Kind: agent.RebuildPurge, Reason: "purge", TokensBefore: p.Before, TokensAfter: p.After}})
	return nil
}
func (f *fakeOps) Alerts() []string               { return f.alerts }
func (f *fakeOps) Messages() []transcript.Message { return f.msgs }
func (f *fakeOps) ContextTokens() (int, bool)     { return 21_000, false }

func (f *fakeOps) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.compacted, f.purged
}

// events returns the open session's event sink, as the engine sees it.
func (h *harness) events() func(agent.Event) {
	live := h.ui.live
	return h.ui.bridge.Events(func(e agent.Event) { h.ui.onEvent(live, e) })
}

func samplePlan() (compact.Plan, []transcript.Message) { return samplePlanAt(time.Now()) }

// samplePlanAt is a compaction plan over five messages stamped now: the
// micro layer clears a tool result, a summary would replace the middle
// three messages.
func samplePlanAt(now time.Time) (compact.Plan, []transcript.Message) {
	call := transcript.ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"calc/calc.go"}`}
	msgs := []transcript.Message{
		transcript.UserText("", "Fix calc.Add", now),
		transcript.AssistantReply("Reading it.", "", []transcript.ToolCall{call}, now),
		transcript.ToolResult(call, strings.Repeat("package calc\n", 200), false, now),
		transcript.AssistantReply("Fixed.", "", nil, now),
		transcript.UserText("", "Now run the tests", now),
	}
	after := append([]transcript.Message(nil), msgs...)
	after[2] = transcript.ToolResult(call, "[cleared]", false, now)
	plan := compact.Plan{
		Threshold: 60_000, Window: 128_000, Force: true, TokensBefore: 84_200, TokensAfter: 21_000,
		Messages: after, Tokens: []int{10, 20, 5, 10, 10},
		Pins: []compact.Pin{{Index: 0, Reason: "first user message"}, {Index: 4, Reason: "last user message"}},
		Layers: []compact.LayerReport{
			{Name: compact.LayerIntake, Ran: true, TokensBefore: 84_200, TokensAfter: 84_200},
			{Name: compact.LayerMicro, Ran: true, Changes: []compact.Change{{Index: 2, Action: compact.ActionCleared, TokensBefore: 2600, TokensAfter: 5}}, TokensBefore: 84_200, TokensAfter: 81_600},
			{Name: compact.LayerMemory, Skipped: "the workspace has no MEMORY.md", TokensBefore: 81_600, TokensAfter: 81_600},
			{Name: compact.LayerSummary, Ran: true, Estimated: true, Changes: []compact.Change{
				{Index: 1, Action: compact.ActionSummarise}, {Index: 2, Action: compact.ActionSummarise}, {Index: 3, Action: compact.ActionSummarise}},
				TokensBefore: 81_600, TokensAfter: 21_000},
		},
		NeedsSummary: true, Summarize: []int{1, 2, 3}, Keep: []int{0, 4},
		Cache: compact.CacheCost{InvalidatedTokens: 21_000, SystemChanges: true, FirstChanged: 2, SavedPerRequest: 63_200,
			MissHitRatio: 10, HitPrice: 0.028, MissPrice: 0.28, BreakEven: 2.99},
	}
	return plan, msgs
}

func TestChecklistFollowsEvents(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	emit := h.events()
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: []todo.Item{
		{ID: "1", Content: "Find the bug", Status: todo.Completed},
		{ID: "2", Content: "Fix calc.Add", Status: todo.InProgress},
		{ID: "3", Content: "Run the tests", Status: todo.Pending},
	}})
	h.q.drain()
	c := h.ui.checklist
	if got := c.Summary(); got != "1/3 · Fix calc.Add" {
		t.Errorf("summary = %q; want \"1/3 · Fix calc.Add\"", got)
	}
	if n := len(c.Items()); n != 3 {
		t.Fatalf("the checklist shows %d items; want 3", n)
	}

	// The next change moves the marker; collapsing shows the summary only.
	emit(agent.Event{Kind: agent.EventChecklist, Checklist: []todo.Item{
		{ID: "1", Content: "Find the bug", Status: todo.Completed},
		{ID: "2", Content: "Fix calc.Add", Status: todo.Completed},
		{ID: "3", Content: "Run the tests", Status: todo.InProgress},
	}})
	h.q.drain()
	c.Toggle()
	if !c.Collapsed() || !strings.Contains(c.HeaderText(), "2/3 · Run the tests") {
		t.Errorf("collapsed header %q; want \"2/3 · Run the tests\"", c.HeaderText())
	}
}

func TestDriftAlertInFooterAndChart(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	emit := h.events()
	emit(agent.Event{Kind: agent.EventDrift, Drift: &prompt.Drift{Changed: true, Part: "system", Booked: true, Reason: "compaction"}})
	h.q.drain()
	if a := h.ui.footer.Alert(); a != "" {
		t.Errorf("a booked drift raised the alert %q", a)
	}
	drift := prompt.Drift{Changed: true, Part: "tools", Name: "grep"}
	emit(agent.Event{Kind: agent.EventDrift, Drift: &drift})
	// The engine's next usage event carries the row it committed, marked
	// with the drift.
	emit(agent.Event{Kind: agent.EventUsage, Usage: &agent.Usage{Window: 128_000,
		Row: ledger.Row{Request: 1, PromptTokens: 5000, ContextTokens: 5200, CacheReported: true, Drift: &drift}}})
	h.q.drain()
	if a := h.ui.footer.Alert(); a != "prefix changed: tool grep — cache reset" {
		t.Errorf("footer alert = %q", a)
	}
	pts := h.ui.chart.Points()
	if len(pts) != 1 || pts[0].Marker != tw.MarkerDrift {
		t.Errorf("chart points = %+v; want one request marked with the drift", pts)
	}
	h.ui.footer.State.Alerts = []string{"loop guard: read_file called 5 times with the same arguments"}
	h.ui.footer.Update()
	if a := h.ui.footer.Alert(); !strings.Contains(a, "cache reset · loop guard") {
		t.Errorf("footer alert = %q; want the drift and the engine's alert", a)
	}
	h.ui.footer.DismissAlerts()
	if a := h.ui.footer.Alert(); a != "" {
		t.Errorf("alert after dismissing = %q", a)
	}
}

func TestCompactionDialogApplyAndCancel(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	plan, msgs := samplePlan()
	f := &fakeOps{plan: plan, msgs: msgs, emit: h.events()}
	h.ui.live.ops = f
	h.ui.setIdleButtons()

	// Cancel: nothing is applied.
	test.Tap(h.ui.compactB)
	h.waitFor("the preview", func() bool { return h.ui.compactDlg != nil })
	d := h.ui.compactDlg
	for _, s := range []string{"84,200 → 21,000 tokens", "micro — ran · 1 message touched · 84,200 → 81,600 tokens",
		"memory — skipped: the workspace has no MEMORY.md", "misses the cache on all 21,000 tokens", "Breaks even after 3.0 later requests"} {
		if !h.shows(s) {
			t.Errorf("the preview does not show %q", s)
		}
	}
	if len(d.before) != 5 || !d.before[0].Pinned || d.before[2].Change != compact.ActionSummarise {
		t.Errorf("before rows = %+v", d.before)
	}
	if len(d.after) != 3 || !d.after[0].Added || !d.after[1].Pinned || !d.after[2].Pinned {
		t.Errorf("after rows = %+v; want the summary and the two pinned messages", d.after)
	}
	test.Tap(d.cancel)
	h.q.drain()
	if n, _ := f.counts(); n != 0 {
		t.Fatalf("Cancel compacted %d times", n)
	}
	for _, it := range h.ui.chat.items {
		if it.kind == itemRebuild {
			t.Fatal("Cancel added a compaction row")
		}
	}

	// Apply: compacts off the UI goroutine and the chat shows the row.
	h.ui.compactDlg = nil
	test.Tap(h.ui.compactB)
	h.waitFor("the preview", func() bool { return h.ui.compactDlg != nil })
	test.Tap(h.ui.compactDlg.apply)
	h.waitFor("the compaction", func() bool { return !h.ui.live.running && h.ui.compactions == 1 })
	if n, _ := f.counts(); n != 1 {
		t.Fatalf("Apply compacted %d times; want 1", n)
	}
	var row *chatItem
	for _, it := range h.ui.chat.items {
		if it.kind == itemRebuild {
			row = it
		}
	}
	if row == nil || row.text != "compacted: 84.2k → 21k tokens" || row.reasoning != "We fixed calc.Add; tests pass." {
		t.Fatalf("compaction row = %+v", row)
	}
	if !h.shows("compacted: 84.2k → 21k tokens") || !h.shows("▸ Summary (") {
		t.Error("the chat does not show the compaction row with its summary collapsed")
	}
	h.ui.chat.toggleReasoning(row)
	if !h.shows("We fixed calc.Add") {
		t.Error("expanding the row does not show the summary")
	}
}

func TestAskModeUsesThePreviewDialog(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	plan, _ := samplePlan()
	live := h.ui.live
	asker := &compactionAsker{bridge: h.ui.bridge, show: func(p compact.Plan, answer func(bool)) func() {
		return h.ui.askCompaction(live, p, answer)
	}}
	type answer struct {
		ok  bool
		err error
	}
	ask := func(ctx context.Context) chan answer {
		ch := make(chan answer, 1)
		go func() {
			ok, err := asker.AskCompaction(ctx, plan)
			ch <- answer{ok, err}
		}()
		return ch
	}
	h.ui.compactDlg = nil
	ch := ask(context.Background())
	h.waitFor("the question", func() bool { return h.ui.compactDlg != nil })
	if len(h.ui.compactDlg.before) != 5 {
		t.Errorf("ask mode before rows = %d; want the plan's 5 messages", len(h.ui.compactDlg.before))
	}
	test.Tap(h.ui.compactDlg.apply)
	if a := <-ch; !a.ok || a.err != nil {
		t.Errorf("Apply answered %+v; want true", a)
	}
	// Stopping the turn withdraws the question.
	h.ui.compactDlg = nil
	ctx, cancel := context.WithCancel(context.Background())
	ch = ask(ctx)
	h.waitFor("the question", func() bool { return h.ui.compactDlg != nil })
	cancel()
	a := <-ch
	h.q.drain()
	if a.ok || !errors.Is(a.err, context.Canceled) {
		t.Errorf("a stopped question answered %+v; want ctx.Err()", a)
	}
	if overlays := h.win.Canvas().Overlays().List(); len(overlays) != 0 {
		t.Errorf("%d overlays left after the question was withdrawn", len(overlays))
	}
}

func TestArchiveBrowserSearch(t *testing.T) {
	test.NewTempApp(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.Local)
	archives := []cycle.Archive{
		{Cycle: 1, Started: t0, Ended: t0.Add(time.Hour), Brief: "Fixed calc.Add; next: Mul overflow.", Tokens: 96_000, Requests: 30,
			Messages: []transcript.Message{
				transcript.UserText("", "Fix calc.Add", t0),
				transcript.AssistantReply("Looking at calc.go", "", nil, t0),
				transcript.AssistantReply("Done with the overflow check", "", nil, t0),
			}},
		{Cycle: 2, Started: t0.Add(2 * time.Hour), Ended: t0.Add(3 * time.Hour), Brief: "Mul overflow handled.", Tokens: 80_000,
			Messages: []transcript.Message{
				transcript.UserText("", "Handle overflow in Mul", t0),
				transcript.AssistantReply("Added a check", "", nil, t0),
			}},
	}
	if got := CycleLine(archives[0]); !strings.HasPrefix(got, "Cycle 1 · 1 Mar 09:00 – 10:00 · 96k tokens · 3 messages\nFixed calc.Add") {
		t.Errorf("cycle line = %q", got)
	}
	w := test.NewTempWindow(t, widget.NewLabel(""))
	b := newArchiveBrowser(archives, w)
	w.SetContent(b.content)
	w.Resize(fyne.NewSize(900, 600))
	if b.sel != 1 || b.brief.Text != "Mul overflow handled." {
		t.Errorf("opened cycle %d with brief %q; want the newest", b.sel, b.brief.Text)
	}
	test.Type(b.search, "calc")
	if b.total != 2 || b.sel != 0 {
		t.Fatalf("search calc: %d hits, cycle %d open; want 2 hits and cycle 1 opened", b.total, b.sel)
	}
	if got := b.Hits(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("highlighted %v; want messages 0 and 1", got)
	}
	if !strings.Contains(b.status.Text, "2 matching messages in 1 cycle") || strings.Contains(b.status.Text, "1 cycles") {
		t.Errorf("status = %q", b.status.Text)
	}
	b.search.SetText("overflow")
	if b.perCycle[1] != 1 || b.perCycle[2] != 1 {
		t.Errorf("hits per cycle = %v", b.perCycle)
	}
	b.cycles.Select(1)
	if got := b.Hits(); len(got) != 1 || got[0] != 0 {
		t.Errorf("cycle 2 highlights %v; want message 0", got)
	}
	// The hit row is drawn highlighted.
	found := false
	fynetest.Walk(w.Canvas().Content(), func(o fyne.CanvasObject) bool {
		if v, ok := o.(*widget.RichText); ok && strings.HasPrefix(v.String(), "● c2:m0") {
			found = true
		}
		return true
	})
	if !found {
		t.Error("the matching message is not shown highlighted")
	}
	// Issue 12 #13: a search filters the list to its hits, and a message
	// opens whole.
	if len(b.view) != 1 || b.view[0] != 0 {
		t.Errorf("cycle 2 lists %v while searching; want only the hit 0", b.view)
	}
	b.onlyHits.SetChecked(false)
	if len(b.view) != 2 {
		t.Errorf("without the filter cycle 2 lists %v", b.view)
	}
	b.msgs.Select(1)
	if b.opened != "Added a check" {
		t.Errorf("opening message 1 shows %q", b.opened)
	}
}

// Archive lines used to show engine messages as "reminder: <system-reminder>"
// and "1 archived cycles" (issue 12 #13).
func TestArchiveExplainsEngineMessages(t *testing.T) {
	test.NewTempApp(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.Local)
	rem := transcript.Injected(transcript.KindReminder, "<system-reminder>\nThe checklist has 2 open items.\n</system-reminder>", t0)
	if got := messageLine(rem); got != "reminder the engine added for the model: The checklist has 2 open items." {
		t.Errorf("reminder line = %q", got)
	}
	st := transcript.Injected(transcript.KindStatus, "<agent_status visibility=\"internal\" state_version=\"1\">\nstep 3 of 50\n</agent_status>", t0)
	if got := messageLine(st); got != "status the engine sent to the model: step 3 of 50" {
		t.Errorf("status line = %q", got)
	}
	b := newArchiveBrowser([]cycle.Archive{{Cycle: 1, Started: t0, Messages: []transcript.Message{rem}}}, nil)
	if !strings.Contains(b.status.Text, "1 archived cycle.") {
		t.Errorf("status = %q", b.status.Text)
	}
}

func TestArchiveButtonOpensBrowser(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.ui.live.ops = &fakeOps{archives: []cycle.Archive{{Cycle: 1, Brief: "the brief", Started: time.Now()}}}
	test.Tap(h.ui.archiveB)
	h.waitFor("the archive", func() bool { return h.ui.archive != nil })
	if !h.shows("the brief") || !h.shows("Cycle 1 ·") {
		t.Error("the archive dialog does not show the cycle and its brief")
	}
}

func TestPurgePreviewApplyAndCancel(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	f := &fakeOps{purgePlan: agent.PurgePreview{Plan: purge.Plan{Changes: []purge.Change{{Msg: 3, Action: "remove", Before: 2600, Because: "asked"}}, Before: 3000, After: 400}},
		emit: h.events()}
	h.ui.live.ops = f
	h.ui.setIdleButtons()
	test.Tap(h.ui.purgeB)
	h.waitFor("the purge preview", func() bool { return h.ui.purgeDlg != nil })
	if !h.shows("remove  message 3 (2,600 tokens)") || !h.shows("History 3,000 → 400 tokens · 1 change") {
		t.Error("the purge preview does not show the plan")
	}
	test.Tap(h.ui.purgeDlg.cancel)
	h.q.drain()
	if _, n := f.counts(); n != 0 {
		t.Fatal("Cancel purged")
	}
	h.ui.purgeDlg = nil
	test.Tap(h.ui.purgeB)
	h.waitFor("the purge preview", func() bool { return h.ui.purgeDlg != nil })
	test.Tap(h.ui.purgeDlg.apply)
	h.waitFor("the purge", func() bool { _, n := f.counts(); return n == 1 && !h.ui.live.running })
	if !h.shows("purged: 3k → 400 tokens") {
		t.Error("the chat does not say what was purged")
	}
}

func TestCompactionCycleAndWarmUpSettings(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://localhost:1/v1", "OPENAI_API_KEY": "k"})
	f := h.ui.newSettingsForm()
	if f.compactM.Selected != "Automatic" || f.cycleAt.Text != "" || f.cyclesOff.Checked || f.warmUp.Checked {
		t.Fatalf("defaults: %q %q %v %v", f.compactM.Selected, f.cycleAt.Text, f.cyclesOff.Checked, f.warmUp.Checked)
	}
	f.compactM.SetSelected("Ask me first")
	f.cycleAt.SetText("60")
	f.warmUp.SetChecked(true)
	if !f.save() {
		t.Fatalf("save refused: %s", f.result.Text)
	}
	var got workbench.Settings
	h.waitFor("the settings to be stored", func() bool {
		got = h.ui.wb.Settings()
		return got.Compaction != ""
	})
	if got.Compaction != workbench.CompactionAsk || got.CycleAt != 0.6 || got.CyclesOff || !got.WarmUp {
		t.Fatalf("stored %+v", got)
	}
	cfg, _ := h.ui.agentConfig(&liveSession{}, false)
	if cfg.Compaction != agent.CompactAsk || cfg.CycleAt != 0.6 || cfg.Asker == nil {
		t.Errorf("agent config: compaction %q, cycle at %v, asker %v", cfg.Compaction, cfg.CycleAt, cfg.Asker)
	}
	g := h.ui.newSettingsForm()
	if g.compactM.Selected != "Ask me first" || g.cycleAt.Text != "60" || !g.warmUp.Checked {
		t.Errorf("reloaded form: %q %q %v", g.compactM.Selected, g.cycleAt.Text, g.warmUp.Checked)
	}
	g.cyclesOff.SetChecked(true)
	g.cycleAt.SetText("5")
	if g.save() || !strings.Contains(g.result.Text, "between 10 and 100") {
		t.Errorf("a 5 %% cycle threshold was accepted or explained as %q", g.result.Text)
	}
	g.cycleAt.SetText("")
	if !g.save() {
		t.Fatal(g.result.Text)
	}
	h.waitFor("the settings to be stored", func() bool { return h.ui.wb.Settings().CyclesOff })
	if cfg, _ := h.ui.agentConfig(&liveSession{}, false); cfg.CycleAt >= 0 {
		t.Errorf("cycles off gave CycleAt %v; want negative", cfg.CycleAt)
	}
	for _, s := range []string{"the next request misses the cache", "first turn hits the cache"} {
		h.ui.showSettings()
		if !h.shows(s) {
			t.Errorf("settings do not explain the cache cost: %q", s)
		}
	}
}

func TestWarmUpOnNewSession(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "OK"}))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	s := h.ui.settings
	s.WarmUp = true
	s.Prices = map[string]config.Price{"test-model": {CacheHit: 1, CacheMiss: 10, Completion: 20}}
	h.ui.applySettings(s)
	h.newSession()
	h.waitFor("the warm-up cost in the footer", func() bool {
		return strings.HasPrefix(h.ui.footer.State.WarmUp, "warm-up ") && strings.Contains(h.ui.footer.State.WarmUp, "$")
	})
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests; want the one warm-up", n)
	}
	if pts := h.ui.chart.Points(); len(pts) != 0 || h.ui.chart.Totals().Requests != 1 {
		t.Errorf("chart has %d points and %d requests; the warm-up counts in the totals only", len(pts), h.ui.chart.Totals().Requests)
	}
}

func TestSessionDetailReadableWhenSelected(t *testing.T) {
	if detailColor(true) != theme.ColorNameForeground || detailColor(false) != theme.ColorNamePlaceHolder {
		t.Error("the selected row's detail line is not drawn in the foreground colour")
	}
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.waitFor("the row", func() bool { return len(h.ui.sessions.items) == 1 })
	h.ui.sessions.list.Refresh()
	var seg *widget.TextSegment
	fynetest.Walk(h.ui.sessions.list, func(o fyne.CanvasObject) bool {
		if v, ok := o.(*widget.RichText); ok && strings.Contains(v.String(), "cycle 1") {
			seg = v.Segments[0].(*widget.TextSegment)
		}
		return true
	})
	if seg == nil || seg.Style.ColorName != theme.ColorNameForeground {
		t.Errorf("selected row detail = %+v; want the foreground colour", seg)
	}
}

func TestManualCompactionAgainstTheEngine(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		return llmtest.Text("The user asked for " + strings.Repeat("several things; ", 40) + "all done.")
	}))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	for i := 0; i < 8; i++ { // enough history that a summary is smaller than what it replaces
		h.send(fmt.Sprintf("task %d", i))
		h.waitIdle()
	}
	test.Tap(h.ui.compactB)
	h.waitFor("the preview or an explanation", func() bool { return h.ui.compactDlg != nil || h.ui.banner.Text() != "" })
	if h.ui.compactDlg == nil {
		t.Fatalf("no preview: %s", h.ui.banner.Text())
	}
	if len(h.ui.compactDlg.before) != len(h.ui.live.sess.Messages()) {
		t.Errorf("before list has %d rows; the log has %d messages", len(h.ui.compactDlg.before), len(h.ui.live.sess.Messages()))
	}
	test.Tap(h.ui.compactDlg.apply)
	h.waitFor("the compaction to finish", func() bool { return !h.ui.live.running && h.ui.footer.State.Run.String() != "compacting…" })
	var row *chatItem
	for _, it := range h.ui.chat.items {
		if it.kind == itemRebuild {
			row = it
		}
	}
	if row == nil {
		t.Fatalf("no compaction row; footer %q, banner %q", h.ui.footer.State.Run, h.ui.banner.Text())
	}
	if !strings.HasPrefix(row.text, "compacted: ") {
		t.Errorf("row = %q", row.text)
	}
	if inv := srv.Invalid(); len(inv) > 0 {
		t.Errorf("the server rejected a request: %s", inv[0].Error)
	}
	// Reopened, the session shows the whole conversation again: what the
	// compaction removed, its row, and what the log holds now.
	id := h.ui.live.id
	h.ui.live = nil
	h.ui.openSession(id)
	h.waitFor("the session to reopen", func() bool { return h.ui.live != nil && h.ui.live.sess != nil })
	h.q.drain()
	rows, firstTask := 0, false
	for _, it := range h.ui.chat.items {
		if it.kind == itemRebuild {
			rows++
		}
		firstTask = firstTask || strings.Contains(it.text, "task 0")
	}
	if rows != 1 || !firstTask {
		t.Errorf("reopened chat: %d compaction rows, first task shown %v", rows, firstTask)
	}
}

func TestNewCycleRunsOffTheUIGoroutine(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	f := &fakeOps{emit: h.events()}
	h.ui.live.ops = f
	h.ui.setIdleButtons()
	if h.ui.cycleB.Disabled() {
		t.Fatal("New cycle is disabled on an idle session")
	}
	h.ui.runNewCycle(h.ui.live)
	h.waitFor("the new cycle", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.cycles == 1 && !h.ui.live.running
	})
	if h.ui.suggestBox.Visible() {
		t.Error("the demo suggestions show in a normal session")
	}
}

func TestNothingToApply(t *testing.T) {
	if planChanges(compact.Plan{Layers: []compact.LayerReport{{Name: "micro", Ran: false}, {Name: "prune", Ran: true}}}) {
		t.Error("an empty plan offers Apply")
	}
	if !planChanges(compact.Plan{NeedsSummary: true}) {
		t.Error("a plan that needs a summary does not offer Apply")
	}
	if !planChanges(compact.Plan{Layers: []compact.LayerReport{{Name: "prune", Ran: true, Changes: []compact.Change{{Index: 3}}}}}) {
		t.Error("a plan that prunes does not offer Apply")
	}
}
