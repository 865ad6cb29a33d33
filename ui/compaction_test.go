package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
)

func TestCompactionDialogApplyAndCancel(t *testing.T) {
	plan, msgs := samplePlan()
	f := &fakeOps{plan: plan, msgs: msgs}
	h := fakeSession(t, f)

	// Cancel: nothing is applied.
	test.Tap(h.ui.actions.compact)
	waitShown[*compaction.Preview](h, "the preview")
	for _, s := range []string{"84,200 → 21,000 tokens", "micro — ran · 1 message touched · 84,200 → 81,600 tokens",
		"memory — skipped: the workspace has no MEMORY.md", "misses the cache on all 21,000 tokens", "Breaks even after 3 later requests"} {
		if !h.shows(s) {
			t.Errorf("the preview does not show %q", s)
		}
	}
	h.tapInDialog("Cancel")
	h.q.drain()
	if n, _ := f.counts(); n != 0 {
		t.Fatalf("Cancel compacted %d times", n)
	}
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemRebuild {
			t.Fatal("Cancel added a compaction row")
		}
	}

	// Apply: compacts off the UI goroutine and the chat shows the row.
	test.Tap(h.ui.actions.compact)
	waitShown[*compaction.Preview](h, "the preview")
	h.tapInDialog("Apply")
	h.waitFor("the compaction", func() bool { n, _ := f.counts(); return !h.ui.live.job.running && n == 1 })
	if n, _ := f.counts(); n != 1 {
		t.Fatalf("Apply compacted %d times; want 1", n)
	}
	var row *chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemRebuild {
			row = it
		}
	}
	if row == nil || row.Text != "compacted: 84.2k → 21k tokens" || row.Reasoning != "We fixed calc.Add; tests pass." {
		t.Fatalf("compaction row = %+v", row)
	}
	if !h.shows("compacted: 84.2k → 21k tokens") || !h.shows("▸ Summary (") {
		t.Error("the chat does not show the compaction row with its summary collapsed")
	}
	h.ui.chat.ToggleReasoning(row)
	if !h.shows("We fixed calc.Add") {
		t.Error("expanding the row does not show the summary")
	}
}

func TestAskModeUsesThePreviewDialog(t *testing.T) {
	h := silentSession(t)
	plan, _ := samplePlan()
	live := h.ui.live
	asker := &compaction.Asker{Do: h.ui.bridge.Do, Show: func(p compact.Plan, answer func(bool)) func() {
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
	ch := ask(context.Background())
	waitShown[*compaction.Preview](h, "the question")
	if !h.previewLists("Before — 5 messages") {
		t.Error("ask mode does not list the plan's 5 messages before")
	}
	h.tapInDialog("Apply")
	if a := <-ch; !a.ok || a.err != nil {
		t.Errorf("Apply answered %+v; want true", a)
	}
	// Stopping the turn withdraws the question.
	ctx, cancel := context.WithCancel(context.Background())
	ch = ask(ctx)
	waitShown[*compaction.Preview](h, "the question")
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
	test.Tap(h.ui.actions.compact)
	var d *compaction.Preview
	h.waitFor("the preview or an explanation", func() bool {
		d, _ = shown[*compaction.Preview](h)
		return d != nil || h.ui.banner.Text() != ""
	})
	if d == nil {
		t.Fatalf("no preview: %s", h.ui.banner.Text())
	}
	if n := len(h.ui.live.sess.Snapshot().Messages()); !h.previewLists(fmt.Sprintf("Before — %d messages", n)) {
		t.Errorf("the before list does not have the log's %d messages", n)
	}
	h.tapInDialog("Apply")
	h.waitFor("the compaction to finish", func() bool { return !h.ui.live.job.running && h.ui.footer.State.Run.String() != "compacting…" })
	var row *chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemRebuild {
			row = it
		}
	}
	if row == nil {
		t.Fatalf("no compaction row; footer %q, banner %q", h.ui.footer.State.Run, h.ui.banner.Text())
	}
	if !strings.HasPrefix(row.Text, "compacted: ") {
		t.Errorf("row = %q", row.Text)
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
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemRebuild {
			rows++
		}
		firstTask = firstTask || strings.Contains(it.Text, "task 0")
	}
	if rows != 1 || !firstTask {
		t.Errorf("reopened chat: %d compaction rows, first task shown %v", rows, firstTask)
	}
}

func TestNewCycleRunsOffTheUIGoroutine(t *testing.T) {
	f := &fakeOps{}
	h := fakeSession(t, f)
	if h.ui.actions.cycle.Disabled() {
		t.Fatal("New cycle is disabled on an idle session")
	}
	h.newCycle()
	h.waitFor("the new cycle", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.cycles == 1 && !h.ui.live.job.running
	})
	if h.ui.input.suggestBox.Visible() {
		t.Error("the demo suggestions show in a normal session")
	}
}
