package compact

import (
	"fmt"
	"math"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

// Text renders the plan for people: the level against the threshold, what
// each layer did or would do with the messages it touches, the pins and
// their reasons, and the cache trade. The output depends only on the plan.
func (p Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Compaction preview: %s → %s tokens", text.Thousands(p.TokensBefore), text.Thousands(p.TokensAfter))
	if p.Threshold > 0 {
		fmt.Fprintf(&b, " (threshold %s", text.Thousands(p.Threshold))
		if p.Window > 0 {
			fmt.Fprintf(&b, ", window %s", text.Thousands(p.Window))
		}
		b.WriteString(")")
	}
	b.WriteString("\n")
	switch {
	case p.Force:
		b.WriteString("Forced: every layer runs even under the threshold.\n")
	case p.Threshold > 0 && p.TokensBefore <= p.Threshold:
		b.WriteString("Nothing to do: the level is under the threshold.\n")
	}
	fmt.Fprintf(&b, "Messages: %s\n", p.Fidelity.Text())
	if p.NeedsSummary {
		fmt.Fprintf(&b, "Needs a summary: %d messages would be summarised by the model (estimated at up to %s tokens).\n",
			len(p.Summarize), text.Thousands(SummaryTokens))
	}

	b.WriteString("\nLayers\n")
	for i, l := range p.Layers {
		fmt.Fprintf(&b, "%d. %-9s %s\n", i+1, l.Name, p.layerLine(l))
		for k, c := range l.Changes {
			if k == maxPreviewChanges {
				fmt.Fprintf(&b, "     … and %d more\n", len(l.Changes)-k)
				break
			}
			fmt.Fprintf(&b, "     #%-4d %-19s %s", c.Index, c.Action, text.Thousands(c.TokensBefore))
			if c.Action != ActionIntake {
				fmt.Fprintf(&b, " → %s", text.Thousands(c.TokensAfter))
			}
			b.WriteString(" tokens")
			if c.Note != "" {
				b.WriteString("  " + c.Note)
			}
			b.WriteString("\n")
		}
	}

	idx := PinnedIndexes(p.Pins)
	fmt.Fprintf(&b, "\nPinned: %d messages kept verbatim\n", len(idx))
	for _, i := range idx {
		var reasons []string
		for _, pin := range p.Pins {
			if pin.Index == i {
				reasons = append(reasons, pin.Reason)
			}
		}
		fmt.Fprintf(&b, "     #%-4d %-28s %s\n", i, p.label(i), strings.Join(reasons, ", "))
	}

	b.WriteString("\nCache\n")
	c := p.Cache
	switch {
	case c.InvalidatedTokens == 0:
		b.WriteString("     no change to the request prefix; the cache keeps hitting\n")
	case c.SystemChanges:
		fmt.Fprintf(&b, "     the system prompt changes, so the next request misses the cache on all %s tokens\n", text.Thousands(c.InvalidatedTokens))
	default:
		fmt.Fprintf(&b, "     the next request misses the cache from message #%d on: %s tokens\n", c.FirstChanged, text.Thousands(c.InvalidatedTokens))
	}
	if c.CallTokens > 0 {
		fmt.Fprintf(&b, "     the summary request sends about %s tokens, %s of them uncached\n", text.Thousands(c.CallTokens), text.Thousands(c.CallMissTokens))
	}
	if c.MissTokens > 0 {
		fmt.Fprintf(&b, "     cost in cache terms: %s tokens billed as misses once\n", text.Thousands(c.MissTokens))
	}
	if c.SavedPerRequest > 0 {
		fmt.Fprintf(&b, "     each later request sends %s fewer tokens\n", text.Thousands(c.SavedPerRequest))
	}
	switch {
	case c.BreakEven < 0:
		b.WriteString("     it never pays off in cache terms: nothing is saved\n")
	case c.BreakEven > 0:
		fmt.Fprintf(&b, "     it pays back after %s (a miss costs %.1f× a hit)", requests(c.BreakEven), c.MissHitRatio)
		if c.Horizon > 0 {
			verdict := "within"
			if c.BreakEven > c.Horizon {
				verdict = "more than"
			}
			fmt.Fprintf(&b, ", %s the %s expected before the ceiling", verdict, requests(c.Horizon))
		}
		b.WriteString("\n")
	}
	if c.HitPrice > 0 && c.MissPrice > 0 {
		once, per := c.Dollars(c.HitPrice, c.MissPrice)
		fmt.Fprintf(&b, "     at $%.3f (hit) / $%.3f (miss) per million tokens: %s once, %s saved per later request\n",
			c.HitPrice, c.MissPrice, money(once), money(per))
	}
	if d := p.Auto; d != nil {
		b.WriteString("\nAutomatic compaction\n")
		fmt.Fprintf(&b, "     target %s tokens, at most %s after, ceiling %s", text.Thousands(d.Target), text.Thousands(d.Limit), text.Thousands(d.Ceiling))
		if d.Growth > 0 {
			fmt.Fprintf(&b, ", growing %s tokens per request", text.Thousands(int(d.Growth+0.5)))
		}
		b.WriteString("\n     costs in cached-token units: one cached input token counts 1\n")
		for i, cand := range d.Candidates {
			mark := " "
			if i == d.Chosen {
				mark = "*"
			}
			fmt.Fprintf(&b, "   %s %-11s → %s tokens, one-off %s, net %s over the horizon", mark, cand.Name, text.Thousands(cand.TokensAfter),
				text.Thousands(int(cand.OneOff+0.5)), text.Thousands(int(math.Round(cand.Net))))
			if cand.Repeats > 0 {
				fmt.Fprintf(&b, " (repeated %d×)", cand.Repeats)
			}
			if cand.Refused != "" {
				b.WriteString("; refused: " + cand.Refused)
			}
			b.WriteString("\n")
		}
		verb := "waits"
		if d.Run {
			verb = "runs"
		}
		fmt.Fprintf(&b, "     %s: %s\n", verb, d.Reason)
	}
	return b.String()
}

func (p Plan) layerLine(l LayerReport) string {
	if l.Skipped != "" {
		return "skipped: " + l.Skipped
	}
	n := len(l.Changes)
	if n == 0 && l.Name != LayerIntake {
		return "nothing to change"
	}
	var what string
	switch l.Name {
	case LayerIntake:
		if n == 0 {
			return "no tool result was shortened at intake"
		}
		return fmt.Sprintf("%s already shortened at intake; nothing to do", text.Plural(n, "tool result"))
	case LayerMicro:
		what = "cleared " + text.Plural(n, "stale tool result")
	case layerPrune:
		what = "pruned " + text.Plural(n, "older duplicate")
	case LayerMemory:
		what = fmt.Sprintf("MEMORY.md replaces %s", text.Plural(n, "message"))
	case LayerSummary:
		what = fmt.Sprintf("would summarise %s with one model call", text.Plural(n, "message"))
	case layerEmergency:
		what = fmt.Sprintf("would drop the oldest %s", text.Plural(n, "message"))
	default:
		what = text.Plural(n, "change")
	}
	line := fmt.Sprintf("%s: %s → %s tokens", what, text.Thousands(l.TokensBefore), text.Thousands(l.TokensAfter))
	switch {
	case l.Enough && p.Target > 0:
		line += ", under the target"
	case l.Enough:
		line += ", under the threshold"
	case p.Threshold > 0:
		line += ", still over"
	}
	return line
}

// label describes message i of the plan in a few words.
func (p Plan) label(i int) string {
	if i < 0 || i >= len(p.Messages) {
		return ""
	}
	return describe(p.Messages[i])
}

// money formats dollars with enough digits to show small amounts.
func money(x float64) string {
	if x >= 0.01 || x == 0 {
		return fmt.Sprintf("$%.4f", x)
	}
	return fmt.Sprintf("$%.6f", x)
}
