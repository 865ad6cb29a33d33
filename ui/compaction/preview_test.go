package compaction

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/transcript"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Compact opens the preview of the engine's plan: the layers, the cache
// cost, the rows before and after; Cancel applies nothing, Apply compacts
// once and the session is idle again at the new level.
func TestPreviewShowsThePlanAndApplyCompacts(t *testing.T) {
	plan, msgs := samplePlan()
	f := &fakeOps{plan: plan, msgs: msgs}
	h := newHarness(t, f)
	h.views.Compact()
	h.drain()
	d := shown[*Preview](h)
	if d == nil {
		t.Fatalf("no preview; the banner said %q", h.said)
	}
	for _, s := range []string{"84,200 → 21,000 tokens", "micro — ran · 1 message touched · 84,200 → 81,600 tokens",
		"memory — skipped: the workspace has no MEMORY.md", "misses the cache on all 21,000 tokens", "Breaks even after 3 later requests"} {
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
	h.drain()
	if f.compacted != 0 || h.sess.running {
		t.Fatalf("Cancel compacted %d times (running %v)", f.compacted, h.sess.running)
	}
	h.views.Compact()
	h.drain()
	test.Tap(shown[*Preview](h).apply)
	if h.sess.run != tw.Busy("compacting…") {
		t.Errorf("the footer says %q while compacting", h.sess.run)
	}
	h.drain()
	if f.compacted != 1 || h.sess.running || h.sess.level != 21_000 || h.sess.run != (tw.RunState{}) {
		t.Errorf("Apply: compacted %d times, running %v, level %d, footer %q", f.compacted, h.sess.running, h.sess.level, h.sess.run)
	}
}

// Asked mid-turn, the preview lists the plan's own messages before.
func TestAskedPreviewListsThePlansMessages(t *testing.T) {
	plan, _ := samplePlan()
	h := newHarness(t, &fakeOps{})
	answered := 0
	d, _ := h.views.ShowPreview(plan, nil, func(bool) { answered++ })
	if len(d.before) != 5 {
		t.Errorf("ask mode before rows = %d; want the plan's 5 messages", len(d.before))
	}
	test.Tap(d.apply)
	test.Tap(d.cancel)
	if answered != 1 {
		t.Errorf("the question was answered %d times", answered)
	}
}

// The preview's rows could not be opened, and a plan that changes nothing
// said "Nothing to apply" with layers "ran · 0 messages touched" and a
// before/after that grew (issue 12 #12).
func TestPreviewRowsOpenAndAnEmptyPlanSaysWhy(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	t0 := time.Now()
	msgs := []transcript.Message{
		transcript.UserText("", "Fix calc.Add, then run the tests and tell me what failed", t0),
		transcript.AssistantReply("Reading calc.go first.", "", nil, t0),
	}
	plan := compact.Plan{TokensBefore: 186, TokensAfter: 190, Threshold: 63_333, Messages: msgs, Tokens: []int{20, 10},
		Layers: []compact.LayerReport{{Name: "micro", Ran: true, TokensBefore: 186, TokensAfter: 186}, {Name: "prune", Ran: true, TokensBefore: 186, TokensAfter: 186}}}
	v := newPreview(plan, msgs, ledger.Price{}, false, w)
	if !strings.Contains(v.head.Text, "nothing would change") || strings.Contains(v.head.Text, "→ 190") {
		t.Errorf("head of an empty plan: %q", v.head.Text)
	}
	if got := layerLine(plan.Layers[0]); !strings.Contains(got, "found nothing to change") || strings.Contains(got, "0 messages touched") {
		t.Errorf("layer line: %q", got)
	}
	v.beforeL.Select(0)
	if v.opened != "Fix calc.Add, then run the tests and tell me what failed" {
		t.Errorf("opening the first row shows %q", v.opened)
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

// The preview offered Apply as its primary button even when the context
// would grow or the rewrite never pays off (or not before the ceiling):
// Cancel is the primary button then, and the head says why.
func TestCancelIsPrimaryWhenApplyingDoesNotHelp(t *testing.T) {
	grows, _ := samplePlan()
	grows.TokensAfter = grows.TokensBefore + 500
	never, _ := samplePlan()
	never.Cache.BreakEven = -1
	late, _ := samplePlan()
	late.Cache.BreakEven, late.Cache.Horizon = 1630.2, 197
	for name, c := range map[string]struct {
		plan compact.Plan
		why  string // "" when Apply is the primary button
	}{
		"helps":         {plan: func() compact.Plan { p, _ := samplePlan(); return p }()},
		"grows":         {plan: grows, why: "Applying would make the context larger (84,200 → 84,700 tokens), so Cancel is the suggested choice."},
		"never pays":    {plan: never, why: "Applying never pays off in cache terms, so Cancel is the suggested choice."},
		"pays too late": {plan: late, why: "Applying pays off only after 1,631 later requests, more than the 197 requests expected before the ceiling, so Cancel is the suggested choice."},
	} {
		h := newHarness(t, &fakeOps{})
		d, _ := h.views.ShowPreview(c.plan, nil, func(bool) {})
		applyFirst := d.apply.Importance == widget.HighImportance && d.cancel.Importance != widget.HighImportance
		cancelFirst := d.cancel.Importance == widget.HighImportance && d.apply.Importance != widget.HighImportance
		switch {
		case c.why == "" && !applyFirst:
			t.Errorf("%s: Apply is not the primary button (apply %v, cancel %v)", name, d.apply.Importance, d.cancel.Importance)
		case c.why != "" && !cancelFirst:
			t.Errorf("%s: Cancel is not the primary button (apply %v, cancel %v)", name, d.apply.Importance, d.cancel.Importance)
		case c.why != "" && !strings.Contains(d.head.Text, c.why):
			t.Errorf("%s: the head %q does not say %q", name, d.head.Text, c.why)
		case c.why == "" && strings.Contains(d.head.Text, "Cancel"):
			t.Errorf("%s: the head %q suggests Cancel", name, d.head.Text)
		}
	}
}

// `tally preview` prints what happens to the messages (kept verbatim ·
// summarised · recallable · gone); the app's preview showed no such line.
func TestPreviewSaysWhatHappensToTheMessages(t *testing.T) {
	plan, _ := samplePlan()
	plan.Fidelity = compact.Fidelity{Verbatim: 2, Summarised: 3, Recallable: 1, Gone: 0}
	h := newHarness(t, &fakeOps{})
	h.views.ShowPreview(plan, nil, func(bool) {})
	want := "Messages: " + plan.Fidelity.Text()
	if !strings.Contains(plan.Text(), want) {
		t.Fatalf("tally preview no longer prints %q", want)
	}
	if !h.shows(want) {
		t.Errorf("the preview does not show %q", want)
	}
}
