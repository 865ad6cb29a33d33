package compaction

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// layerLine describes one layer of a compaction plan in a line: its name,
// whether it ran, was skipped (and why) or is a forecast, the messages it
// touches and the tokens before and after.
func layerLine(l compact.LayerReport) string {
	state := "ran"
	switch {
	case l.Skipped != "":
		state = "skipped: " + l.Skipped
	case l.Estimated:
		state = "forecast (needs the model or is a last resort)"
	case !l.Ran:
		state = "did not run"
	case len(l.Changes) == 0:
		return fmt.Sprintf("%s — ran, found nothing to change · %s tokens", l.Name, text.Thousands(l.TokensBefore))
	}
	return fmt.Sprintf("%s — %s · %s touched · %s → %s tokens", l.Name, state, text.Plural(len(l.Changes), "message"),
		text.Thousands(l.TokensBefore), text.Thousands(l.TokensAfter))
}

// cacheCostText explains what applying a plan costs in cache terms: the
// prefix tokens the next request re-sends at the miss price, what each
// later request saves and after how many requests it pays off. Without a
// price it says so and counts in tokens.
func cacheCostText(c compact.CacheCost, p ledger.Price, priced bool) string {
	var b strings.Builder
	switch {
	case c.InvalidatedTokens == 0:
		b.WriteString("The request prefix does not change: the cache keeps hitting.")
	case c.SystemChanges:
		fmt.Fprintf(&b, "The system prompt changes, so the next request misses the cache on all %s tokens", text.Thousands(c.InvalidatedTokens))
	default:
		fmt.Fprintf(&b, "The next request misses the cache from message #%d on: %s tokens", c.FirstChanged, text.Thousands(c.InvalidatedTokens))
	}
	oneTime, perReq := c.Dollars(p.CacheHit, p.CacheMiss)
	if c.InvalidatedTokens > 0 {
		if priced {
			fmt.Fprintf(&b, " (%s once).", tw.Dollars(oneTime))
		} else {
			b.WriteString(" (no price for this model: cost n/a).")
		}
	}
	if c.SavedPerRequest > 0 {
		fmt.Fprintf(&b, "\nEvery later request sends %s fewer tokens", text.Thousands(c.SavedPerRequest))
		if priced {
			fmt.Fprintf(&b, " (saves %s each).", tw.Dollars(perReq))
		} else {
			b.WriteString(".")
		}
	}
	switch {
	case c.BreakEven < 0:
		b.WriteString("\nIt never pays off in cache terms: nothing is saved.")
	case c.BreakEven > 0:
		// A request is whole: it pays off after the next whole one.
		fmt.Fprintf(&b, "\nBreaks even after %s", text.Plural(int(math.Ceil(c.BreakEven)), "later request"))
		if !priced {
			fmt.Fprintf(&b, " (assuming a miss costs %.0f× a hit)", c.MissHitRatio)
		}
		b.WriteString(".")
	}
	return b.String()
}

// previewRow is one message in the before / after lists of the preview.
type previewRow struct {
	Text   string
	Pinned bool
	Change string // what the plan does to it: "cleared", "summarise", …
	Added  bool   // a summary or memory row that only exists after
	Full   string // the whole message, shown when the row is opened
}

// compactionRows builds the before and after transcripts of a plan. before
// is the log as it is; when nil (the engine asked mid-turn) the plan's own
// messages stand in for it, with their original token counts.
func compactionRows(plan compact.Plan, before []transcript.Message) (bef, aft []previewRow) {
	pins := map[int][]string{}
	for _, p := range plan.Pins {
		pins[p.Index] = append(pins[p.Index], p.Reason)
	}
	change := map[int]compact.Change{}
	for _, l := range plan.Layers {
		for _, c := range l.Changes {
			if c.Action == compact.ActionIntake {
				continue
			}
			change[c.Index] = c // later layers override earlier ones
		}
	}
	gone := map[int]bool{}
	for _, i := range plan.Summarize {
		gone[i] = true
	}
	for i, c := range change {
		if c.Action == compact.ActionDrop {
			gone[i] = true
		}
	}
	n := len(plan.Messages)
	if before != nil {
		n = len(before)
	}
	for i := 0; i < n; i++ {
		var m transcript.Message
		toks := 0
		if before != nil {
			m = before[i]
			toks = transcript.TokensOf(m)
		} else {
			m = plan.Messages[i]
			if i < len(plan.Tokens) {
				toks = plan.Tokens[i]
			}
		}
		if c, ok := change[i]; ok && c.TokensBefore > 0 {
			toks = c.TokensBefore
		}
		row := previewRow{Text: fmt.Sprintf("#%d  %s  (%s)", i, tw.MessageLine(m), tw.TokensShort(toks)), Change: change[i].Action, Full: tw.FullText(m)}
		if r, ok := pins[i]; ok {
			row.Pinned = true
			row.Text = fmt.Sprintf("#%d  pinned: %s · %s  (%s)", i, strings.Join(r, ", "), tw.MessageLine(m), tw.TokensShort(toks))
		}
		bef = append(bef, row)
	}
	if len(plan.Summarize) > 0 {
		what := fmt.Sprintf("Summary of %s, written by the model (≈%s tokens)", text.Plural(len(plan.Summarize), "message"), text.Thousands(compact.SummaryTokens))
		if plan.SummarySource == compact.LayerMemory {
			what = "MEMORY.md stands in for " + text.Plural(len(plan.Summarize), "message")
		}
		aft = append(aft, previewRow{Text: what, Added: true, Full: what + ".\nThe model writes it when the compaction is applied; its text is not known before."})
	}
	for i := 0; i < len(plan.Messages); i++ {
		if gone[i] {
			continue
		}
		m := plan.Messages[i]
		toks := 0
		if i < len(plan.Tokens) {
			toks = plan.Tokens[i]
		}
		row := previewRow{Text: fmt.Sprintf("#%d  %s  (%s)", i, tw.MessageLine(m), tw.TokensShort(toks)), Change: change[i].Action, Full: tw.FullText(m)}
		if _, ok := pins[i]; ok {
			row.Pinned = true
			row.Text = fmt.Sprintf("#%d  pinned · %s  (%s)", i, tw.MessageLine(m), tw.TokensShort(toks))
		}
		aft = append(aft, row)
	}
	return bef, aft
}

// Preview is the content of the compaction preview dialog: the plan's
// layers, the messages before and after, the pinned ones and what
// applying costs in cache terms, with Apply and Cancel.
type Preview struct {
	widget.BaseWidget

	plan     compact.Plan
	head     *widget.Label
	fidelity *widget.Label // what happens to the messages: kept verbatim, summarised, recallable, gone
	layers   *fyne.Container
	pins     *widget.Label
	cost     *widget.Label
	before   []previewRow
	after    []previewRow
	opened   string // the text of the row last opened, for tests
	win      fyne.Window
	beforeL  *widget.List
	afterL   *widget.List
	tabs     *container.AppTabs
	apply    *widget.Button
	cancel   *widget.Button
	answered bool
}

func newPreview(plan compact.Plan, before []transcript.Message, price ledger.Price, priced bool, win fyne.Window) *Preview {
	v := &Preview{plan: plan, win: win}
	v.ExtendBaseWidget(v)
	head := fmt.Sprintf("%s → %s tokens", text.Thousands(plan.TokensBefore), text.Thousands(plan.TokensAfter))
	if !planChanges(plan) {
		head = fmt.Sprintf("%s tokens — %s", text.Thousands(plan.TokensBefore), nothingToApply(plan))
	}
	if plan.Threshold > 0 {
		head += fmt.Sprintf(" (auto-compaction at %s)", text.Thousands(plan.Threshold))
	}
	if plan.NeedsSummary {
		head += "\nApplying asks the model to summarise " + text.Plural(len(plan.Summarize), "message") + "; the figures after it are estimates."
	}
	if why := notWorthIt(plan); why != "" && planChanges(plan) {
		head += "\n" + why + ", so Cancel is the suggested choice."
	}
	v.head = &widget.Label{Text: head, TextStyle: fyne.TextStyle{Bold: true}, Wrapping: fyne.TextWrapWord}
	// The line `tally preview` prints, from the same function.
	v.fidelity = &widget.Label{Text: "Messages: " + plan.Fidelity.Text(), Wrapping: fyne.TextWrapWord}
	v.layers = container.NewVBox()
	for i, l := range plan.Layers {
		color := theme.ColorNameForeground
		if l.Skipped != "" {
			color = theme.ColorNamePlaceHolder
		}
		t := &widget.RichText{Wrapping: fyne.TextWrapWord, Scroll: container.ScrollNone}
		tw.SetStyledText(t, fmt.Sprintf("%d. %s", i+1, layerLine(l)), color, l.Ran && len(l.Changes) > 0)
		v.layers.Add(t)
	}
	var pins []string
	byIndex := map[int][]string{}
	for _, p := range plan.Pins {
		byIndex[p.Index] = append(byIndex[p.Index], p.Reason)
	}
	idx := make([]int, 0, len(byIndex))
	for i := range byIndex {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		line := fmt.Sprintf("#%d", i)
		if i < len(plan.Messages) {
			line += "  " + tw.MessageLine(plan.Messages[i])
		}
		pins = append(pins, line+"\n      kept because: "+strings.Join(byIndex[i], ", "))
	}
	if len(pins) == 0 {
		pins = []string{"Nothing is pinned."}
	}
	v.pins = &widget.Label{Text: strings.Join(pins, "\n"), Wrapping: fyne.TextWrapWord}
	v.cost = &widget.Label{Text: cacheCostText(plan.Cache, price, priced), Wrapping: fyne.TextWrapWord}
	v.before, v.after = compactionRows(plan, before)
	v.beforeL = v.previewList(&v.before)
	v.afterL = v.previewList(&v.after)
	split := container.NewHSplit(
		container.NewBorder(boldLabel("Before — "+text.Plural(len(v.before), "message")), nil, nil, nil, v.beforeL),
		container.NewBorder(boldLabel("After — "+text.Plural(len(v.after), "row")), nil, nil, nil, v.afterL))
	v.tabs = container.NewAppTabs(
		container.NewTabItem("Layers", container.NewVScroll(v.layers)),
		container.NewTabItem("Before / after", split),
		container.NewTabItem(fmt.Sprintf("Pinned (%d)", len(idx)), container.NewVScroll(v.pins)),
	)
	return v
}

func boldLabel(s string) *widget.Label {
	return &widget.Label{Text: s, TextStyle: fyne.TextStyle{Bold: true}}
}

// CreateRenderer lays the preview out.
func (v *Preview) CreateRenderer() fyne.WidgetRenderer {
	costBox := container.NewVBox(widget.NewSeparator(), boldLabel("Cache cost of applying"), v.cost)
	return widget.NewSimpleRenderer(container.NewBorder(container.NewVBox(v.head, v.fidelity), costBox, nil, nil, v.tabs))
}

// ShowPreview opens the preview of plan over the log before (nil: the
// plan's own messages stand in for it, as when the engine asks mid-turn);
// answer gets true for Apply and false for Cancel (or the dialog being
// closed). It returns the preview and a function that closes the dialog
// without answering (the engine gave up asking).
func (vs *Views) ShowPreview(plan compact.Plan, before []transcript.Message, answer func(bool)) (*Preview, func()) {
	price, priced := vs.h.Price()
	win := vs.h.Window
	v := newPreview(plan, before, price, priced, win)
	var dlg *dialog.CustomDialog
	done := func(ok bool) {
		if v.answered {
			return
		}
		v.answered = true
		dlg.Hide()
		answer(ok)
	}
	v.apply = &widget.Button{Text: "Apply", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance, OnTapped: func() { done(true) }}
	v.cancel = &widget.Button{Text: "Cancel", Icon: theme.CancelIcon(), OnTapped: func() { done(false) }}
	if notWorthIt(plan) != "" || !planChanges(plan) {
		// Cancel is the primary button when applying would not help.
		v.apply.Importance, v.cancel.Importance = widget.MediumImportance, widget.HighImportance
	}
	if !planChanges(plan) {
		v.apply.Disable()
		v.apply.SetText("Nothing to apply")
	}
	dlg = dialog.NewCustomWithoutButtons("Compaction preview", v, win)
	dlg.SetButtons([]fyne.CanvasObject{v.cancel, v.apply})
	dlg.SetOnClosed(func() { done(false) })
	dlg.Resize(fyne.NewSize(860, 620))
	dlg.Show()
	return v, func() {
		v.answered = true
		dlg.Hide()
	}
}

// notWorthIt says why applying plan would not help — the context would
// grow, or the rewrite never pays off in cache terms, or not before the
// ceiling — or "" when it would.
func notWorthIt(plan compact.Plan) string {
	c := plan.Cache
	switch {
	case plan.TokensAfter > plan.TokensBefore:
		return fmt.Sprintf("Applying would make the context larger (%s → %s tokens)", text.Thousands(plan.TokensBefore), text.Thousands(plan.TokensAfter))
	case c.BreakEven < 0:
		return "Applying never pays off in cache terms"
	case c.Horizon > 0 && c.BreakEven > c.Horizon:
		return fmt.Sprintf("Applying pays off only after %s, more than the %s expected before the ceiling",
			text.Plural(int(math.Ceil(c.BreakEven)), "later request"), text.Plural(int(c.Horizon), "request"))
	}
	return ""
}

// planChanges reports whether applying plan would change anything: a
// layer touched a message or a summary would be written.
func planChanges(plan compact.Plan) bool {
	if plan.NeedsSummary || plan.Summary != "" {
		return true
	}
	for _, l := range plan.Layers {
		if l.Ran && len(l.Changes) > 0 && !l.Estimated {
			return true
		}
	}
	return false
}
