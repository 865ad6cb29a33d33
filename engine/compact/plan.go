package compact

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// Summary and memory limits (DESIGN §4).
const (
	// memoryMinTokens and memoryMaxTokens bound the summable history for
	// which MEMORY.md may stand in as the summary.
	memoryMinTokens = 10_000
	memoryMaxTokens = 40_000
	// SummaryTokens is the largest summary. The dry run assumes the
	// summary is this long, or as long as what it replaces if that is
	// shorter.
	SummaryTokens = 2_048
	// defaultMissHitRatio is the assumed price of a cache miss relative to
	// a hit when the prices are unknown.
	defaultMissHitRatio = 10.0
	// maxPreviewChanges is the number of changes listed per layer in
	// [Plan.Text]; the rest are counted.
	maxPreviewChanges = 12
	// perMillion converts prices per million tokens.
	perMillion = 1_000_000
)

// Headings of the section merged into the system prompt.
const (
	SummaryHeading = "# Summary of earlier work"
	memoryHeading  = "# Session memory"
	summaryLead    = "The conversation before the messages below was compacted into this summary. It is a paraphrase, not a record: re-read files and re-run commands instead of trusting remembered details."
	memoryLead     = "The conversation before the messages below was dropped; the workspace MEMORY.md, loaded here, stands in for it."
)

// CacheCost weighs applying a plan against the provider's prefix cache.
// Costs in hit-price units count one cached input token as 1 and one
// uncached token as MissHitRatio.
type CacheCost struct {
	// InvalidatedTokens is how many tokens of the next request miss the
	// cache because they come after the first changed byte: everything
	// from the first rewritten message on, or the whole request when the
	// system prompt changes (a summary or memory merge does).
	InvalidatedTokens int `json:"invalidated_tokens"`
	// FirstChanged is the index of the first rewritten message, or -1.
	FirstChanged int `json:"first_changed"`
	// SystemChanges is true when the plan merges a section into the
	// system prompt.
	SystemChanges bool `json:"system_changes"`
	// CallTokens is the estimated input of the summary request, zero when
	// none is needed; CallMissTokens is the part of it the provider's
	// cache does not serve (all of a flattened request; the rewritten
	// tail and the instruction of a cache-aligned one).
	CallTokens     int `json:"call_tokens,omitempty"`
	CallMissTokens int `json:"call_miss_tokens,omitempty"`
	// MissTokens is what the plan costs in cache terms: the tokens billed
	// as misses once because of it, InvalidatedTokens plus
	// CallMissTokens.
	MissTokens int `json:"miss_tokens"`
	// SavedPerRequest is how many fewer tokens every later request sends.
	SavedPerRequest int `json:"saved_per_request"`
	// MissHitRatio is the price ratio the costs use (see [MissHitRatio]).
	MissHitRatio float64 `json:"miss_hit_ratio"`
	// HitPrice and MissPrice are the input prices per million tokens the
	// plan was made with; zero when unknown.
	HitPrice  float64 `json:"hit_price,omitempty"`
	MissPrice float64 `json:"miss_price,omitempty"`
	// OneOff is the one-time cost of applying the plan in hit-price
	// units: each invalidated token billed at the miss price instead of
	// the hit price, and the summary request's input at its own prices.
	// The summary's output is priced apart and not counted.
	OneOff float64 `json:"one_off"`
	// BreakEven is the number of later requests after which applying the
	// plan has cost less than not applying it, OneOff over
	// SavedPerRequest: 0 when it costs nothing, -1 when nothing is saved.
	BreakEven float64 `json:"break_even"`
	// Horizon is the expected number of remaining requests the plan was
	// weighed over (see [Horizon]); zero when it was not weighed.
	Horizon float64 `json:"horizon,omitempty"`
}

// NewCacheCost prices a rewrite: invalidated tokens of the next request
// miss the cache once, the summary request sends callTokens of which
// callMiss miss, and every later request sends saved fewer tokens, at
// hitPrice and missPrice per million input tokens (unknown when zero; see
// [MissHitRatio]). FirstChanged is left at -1 for the caller to set.
func NewCacheCost(invalidated, callTokens, callMiss, saved int, hitPrice, missPrice float64) CacheCost {
	c := CacheCost{
		InvalidatedTokens: max(invalidated, 0), FirstChanged: -1,
		CallTokens: max(callTokens, 0), CallMissTokens: min(max(callMiss, 0), max(callTokens, 0)),
		SavedPerRequest: saved, MissHitRatio: MissHitRatio(hitPrice, missPrice),
	}
	if hitPrice > 0 && missPrice > 0 {
		c.HitPrice, c.MissPrice = hitPrice, missPrice
	}
	c.MissTokens = c.InvalidatedTokens + c.CallMissTokens
	r := c.MissHitRatio
	c.OneOff = float64(c.InvalidatedTokens)*max(r-1, 0) + float64(c.CallMissTokens)*r + float64(c.CallTokens-c.CallMissTokens)
	c.BreakEven = breakEven(c.OneOff, saved)
	return c
}

// Dollars prices the trade at hitPrice and missPrice per million input
// tokens: the one-time cost of re-sending the invalidated tokens at the
// miss price instead of the hit price plus the summary request's input,
// and the saving on each later request, whose saved tokens would
// otherwise have been cache hits. Negative prices count as zero.
func (c CacheCost) Dollars(hitPrice, missPrice float64) (oneTime, perRequest float64) {
	hitPrice, missPrice = max(hitPrice, 0), max(missPrice, 0)
	oneTime = float64(c.InvalidatedTokens) * max(missPrice-hitPrice, 0) / perMillion
	oneTime += (float64(c.CallMissTokens)*missPrice + float64(c.CallTokens-c.CallMissTokens)*hitPrice) / perMillion
	perRequest = float64(max(c.SavedPerRequest, 0)) * hitPrice / perMillion
	return oneTime, perRequest
}

// breakEven is the number of requests after which saving saved hit-price
// units per request has paid a one-off cost: 0 when it costs nothing, -1
// when nothing is saved.
func breakEven(oneOff float64, saved int) float64 {
	switch {
	case oneOff <= 0:
		return 0
	case saved <= 0:
		return -1
	}
	return oneOff / float64(saved)
}

// Plan is the dry run of a compaction: what each layer did or would do, the
// pins, and the cost. It holds no model output; [Summarize] and [Apply]
// complete it.
type Plan struct {
	Threshold int           `json:"threshold"`
	Window    int           `json:"window"`
	Force     bool          `json:"force,omitempty"`
	Layers    []LayerReport `json:"layers"`
	Pins      []Pin         `json:"pins"`
	// Messages is the log after the pure layers (intake, micro, prune),
	// one entry per input message at the same index.
	Messages []transcript.Message `json:"-"`
	// Tokens holds the token count of each entry of Messages.
	Tokens []int `json:"-"`
	// NeedsSummary is true when a model-written summary is the next step.
	NeedsSummary bool `json:"needs_summary"`
	// Summarize lists the indexes the summary (or the memory file)
	// replaces; Keep lists the indexes that stay, ascending.
	Summarize []int `json:"summarize,omitempty"`
	Keep      []int `json:"keep,omitempty"`
	// Summary is text a pure layer already supplied: the memory file.
	Summary string `json:"-"`
	// SummarySource is LayerMemory when Summary came from MEMORY.md.
	SummarySource string `json:"summary_source,omitempty"`
	// TokensBefore is the level now; TokensAfter the level the plan
	// reaches, with the summary estimated at SummaryTokens.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	// PureTokensAfter is the level after the pure layers alone.
	PureTokensAfter int `json:"pure_tokens_after"`
	// ReminderBudget is the token budget of the reminders [Apply] adds
	// when the plan cuts the history; zero when it does not.
	ReminderBudget int `json:"reminder_budget,omitempty"`
	// LevelRatio is how many tokens of the level one token of the
	// planner's own count stands for (see [Input.Ratio]).
	LevelRatio float64 `json:"level_ratio,omitempty"`
	// Target is the level the layers worked towards when it is under the
	// threshold (see [Input.Target]); zero otherwise.
	Target int       `json:"target,omitempty"`
	Cache  CacheCost `json:"cache"`
	// Fidelity counts what the plan does to the messages.
	Fidelity Fidelity `json:"fidelity"`
	// Auto is the pay-off decision of an automatic compaction (see
	// [PlanAuto]); nil for a plan made by [PlanCascade] alone.
	Auto *Decision `json:"auto,omitempty"`
}

// Fidelity counts the messages of a plan by what becomes of them; every
// message is in exactly one of Verbatim, Recallable and Gone, and
// Summarised counts those of Recallable the summary also covers.
type Fidelity struct {
	// Verbatim counts the messages kept as they are.
	Verbatim int `json:"verbatim"`
	// Summarised counts the removed messages the model's summary covers:
	// all of them with a summary, none with the memory file.
	Summarised int `json:"summarised"`
	// Recallable counts the removed messages the section lists with a
	// handle (the dropped index, the stubs of the user's words, or the
	// index line of the result of a call), which retrieve_tool_result
	// reads back once the agent stored them.
	Recallable int `json:"recallable"`
	// Gone counts the rest: messages a pure layer (micro, prune) replaced
	// by a placeholder naming the call to run again, and removed messages
	// not listed (see droppedMinTokens: bookkeeping, tiny replies, old
	// placeholders). Their handles still resolve but nothing names them.
	Gone int `json:"gone"`
}

// Text is the one line previews show: "kept verbatim 12 · summarised 40
// · dropped but recallable 40 · gone 0".
func (f Fidelity) Text() string {
	return fmt.Sprintf("kept verbatim %d · summarised %d · dropped but recallable %d · gone %d",
		f.Verbatim, f.Summarised, f.Recallable, f.Gone)
}

// fidelity counts a plan: orig are the messages before the pure layers
// with their tokens, after the same messages after them, keep the indexes
// that stay when cut is true (otherwise all stay).
func fidelity(orig []transcript.Message, origToks []int, after []transcript.Message, keep []int, cut, summary bool) Fidelity {
	var f Fidelity
	kept := make(map[int]bool, len(keep))
	for _, i := range keep {
		kept[i] = true
	}
	for i := range after {
		switch {
		case cut && !kept[i]:
			if summary {
				f.Summarised++
			}
			if listed(orig[i], origToks[i]) {
				f.Recallable++
			} else {
				f.Gone++
			}
		case i < len(orig) && orig[i].Text() != after[i].Text():
			f.Gone++
		default:
			f.Verbatim++
		}
	}
	return f
}

// JSON returns the plan as indented JSON for the command line. It never
// fails: a plan holds only plain values.
func (p Plan) JSON() []byte {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return b
}

// Estimating a summary before it exists: a quarter of what it replaces,
// at least summaryFloor and at most SummaryTokens.
const (
	summaryRatio = 4
	summaryFloor = 200
)

// summaryEstimate is the expected size of a summary of summable tokens.
func summaryEstimate(summable int) int {
	return min(SummaryTokens, max(summable/summaryRatio, summaryFloor))
}

// MechanicalPins returns the pins that hold back micro-compact and prune:
// every reason except the working set and pairing, which matter only when
// messages are removed.
func MechanicalPins(pins []Pin) []Pin {
	var out []Pin
	for _, p := range pins {
		if p.Reason != reasonWorkingSet && p.Reason != reasonPair {
			out = append(out, p)
		}
	}
	return out
}

// PlanCascade runs the pure layers (intake, micro, prune, memory) on in and,
// if the level is still over the goal — the threshold, or in.Target when
// that is lower — (or in.Force or in.Deep is set), describes what the
// summary layer would do and, failing that, the emergency truncation. It
// calls no model and never modifies in. The level after a summary or the
// memory file counts the reminders [Apply] would add.
func PlanCascade(in Input) Plan {
	in = normalized(in)
	pins := Pins(in)
	p := Plan{
		Threshold: in.Threshold, Window: in.Window, Force: in.Force,
		Pins: pins, TokensBefore: in.Level,
		Cache: CacheCost{FirstChanged: -1},
	}
	if g := goal(in); g != in.Threshold {
		p.Target = g
	}
	cur, rep := Intake(in, pins)
	p.Layers = append(p.Layers, rep)
	// The mechanical layers only shrink tool output and keep every
	// message in place, so the working-set rule does not hold them back:
	// the newest copy of a re-read file survives pruning anyway, and a
	// cleared stale read can be repeated. Recent messages, errors and
	// patches stay untouched.
	mech := MechanicalPins(pins)
	firstChanged := -1
	for _, layer := range []func(Input, []Pin) (Input, LayerReport){Micro, Prune} {
		cur, rep = layer(cur, mech)
		p.Layers = append(p.Layers, rep)
		for _, c := range rep.Changes {
			if firstChanged < 0 || c.Index < firstChanged {
				firstChanged = c.Index
			}
		}
	}
	p.Messages, p.Tokens = cur.Messages, cur.Tokens
	p.PureTokensAfter, p.TokensAfter = cur.Level, cur.Level

	notNeeded := func(name string) LayerReport {
		return LayerReport{Name: name, Skipped: "not needed: the level is under the " + goalName(in),
			Enough: true, TokensBefore: cur.Level, TokensAfter: cur.Level}
	}
	needed := keepGoing(cur, cur.Level)
	pinned := pinnedSet(pins)
	var drop []int
	summable := 0
	for i := range cur.Messages {
		if pinned[i] {
			p.Keep = append(p.Keep, i)
		} else {
			drop = append(drop, i)
			summable += cur.Tokens[i]
		}
	}
	systemChanges := false
	// The facts part (record, the user's older words, the dropped index)
	// goes into the same section as the summary or the memory file, so
	// the estimates count it as Apply will build it.
	factsText := ""
	if needed && len(drop) > 0 {
		keepSet := make(map[int]bool, len(p.Keep))
		for _, i := range p.Keep {
			keepSet[i] = true
		}
		factsText = buildFacts(in, cur.Messages, keepSet, true).text
	}

	// Layer 4: the memory file as the summary.
	mem := LayerReport{Name: LayerMemory, TokensBefore: cur.Level, TokensAfter: cur.Level}
	switch {
	case !needed:
		mem = notNeeded(LayerMemory)
	case strings.TrimSpace(in.Memory) == "":
		mem.Skipped = "the workspace has no MEMORY.md"
	case len(drop) == 0:
		mem.Skipped = "every message is pinned, so there is nothing to replace"
	case summable < memoryMinTokens || summable > memoryMaxTokens:
		mem.Skipped = fmt.Sprintf("the summable history is %s tokens; MEMORY.md stands in only for %s–%s",
			text.Thousands(summable), text.Thousands(memoryMinTokens), text.Thousands(memoryMaxTokens))
	default:
		mem.Ran = true
		section := withFacts(factsText, MemorySection(in.Memory))
		cut := cur.Level - cur.scaled(summable-tokens.Count(section))
		p.ReminderBudget = fitReminders(cur, cut)
		mem.TokensAfter = cut + cur.scaled(reminderTokens(cur, section, p.Keep, p.ReminderBudget))
		for _, i := range drop {
			mem.Changes = append(mem.Changes, Change{Index: i, Action: actionReplaced, TokensBefore: cur.Tokens[i], Note: describe(cur.Messages[i])})
		}
		p.Summary, p.SummarySource = in.Memory, LayerMemory
		p.Summarize = drop
		p.TokensAfter = mem.TokensAfter
		systemChanges = true
	}
	mem.Enough = fits(in, mem.TokensAfter)
	p.Layers = append(p.Layers, mem)

	// Layer 5: the model-written summary, estimated.
	sr := LayerReport{Name: LayerSummary, TokensBefore: p.TokensAfter, TokensAfter: p.TokensAfter}
	section := withFacts(factsText, SummarySection(""))
	after := cur.Level - cur.scaled(summable-summaryEstimate(summable)-tokens.Count(section))
	switch {
	case mem.Ran:
		sr.Skipped = "MEMORY.md stands in for the summary"
	case !needed:
		sr = notNeeded(LayerSummary)
	case len(drop) == 0:
		sr.Skipped = "every message is pinned, so there is nothing to summarise"
	case after >= cur.Level:
		sr.Skipped = fmt.Sprintf("summarising the %d unpinned messages would not make the context smaller", len(drop))
	default:
		sr.Estimated = true
		p.ReminderBudget = fitReminders(cur, after)
		sr.TokensAfter = after + cur.scaled(reminderTokens(cur, section, p.Keep, p.ReminderBudget))
		for _, i := range drop {
			sr.Changes = append(sr.Changes, Change{Index: i, Action: ActionSummarise, TokensBefore: cur.Tokens[i], Note: describe(cur.Messages[i])})
		}
		p.NeedsSummary = true
		p.Summarize = drop
		p.TokensAfter = sr.TokensAfter
		systemChanges = true
	}
	sr.Enough = fits(in, sr.TokensAfter)
	p.Layers = append(p.Layers, sr)

	// Layer 6: emergency truncation, forecast only. It protects the
	// window, so its goal is the threshold, never the target.
	underThreshold := in.Threshold > 0 && p.TokensAfter <= in.Threshold
	em := LayerReport{Name: layerEmergency, TokensBefore: p.TokensAfter, TokensAfter: p.TokensAfter, Enough: underThreshold}
	switch {
	case in.Threshold <= 0:
		em.Skipped = "no threshold is set"
	case underThreshold:
		em.Skipped = "not needed: the level fits after the layers above"
	default:
		em.Estimated = true
		keepIdx := p.Keep
		if !systemChanges {
			keepIdx = allIndexes(len(cur.Messages))
		}
		msgs := make([]transcript.Message, len(keepIdx))
		toks := make([]int, len(keepIdx))
		for k, i := range keepIdx {
			msgs[k], toks[k] = cur.Messages[i], cur.Tokens[i]
		}
		fixed := p.TokensAfter - cur.scaled(sum(toks))
		dropped := truncation(msgs, toks, cur.unscaled(in.Threshold-fixed))
		gone := 0
		for k, d := range dropped {
			if !d {
				continue
			}
			i := keepIdx[k]
			gone += toks[k]
			em.Changes = append(em.Changes, Change{Index: i, Action: ActionDrop, TokensBefore: toks[k], Note: describe(cur.Messages[i])})
		}
		em.TokensAfter = p.TokensAfter - cur.scaled(gone)
		em.Enough = in.Threshold > 0 && em.TokensAfter <= in.Threshold
	}
	p.Layers = append(p.Layers, em)

	invalidated, call, callMiss := 0, 0, 0
	switch {
	case systemChanges:
		invalidated = p.TokensAfter
	case firstChanged >= 0:
		invalidated = cur.scaled(sum(cur.Tokens[firstChanged:]))
	}
	if p.NeedsSummary {
		call, callMiss = summaryCall(cur, p, firstChanged)
	}
	p.Fidelity = fidelity(in.Messages, in.Tokens, cur.Messages, p.Keep, systemChanges, p.NeedsSummary)
	p.LevelRatio = cur.ratio
	p.Cache = NewCacheCost(invalidated, call, callMiss, p.TokensBefore-p.TokensAfter, in.HitPrice, in.MissPrice)
	p.Cache.FirstChanged, p.Cache.SystemChanges = firstChanged, systemChanges
	return p
}

// reminderTokens is what the reminders [Apply] adds after a cut cost, in
// the planner's own count: the kept messages of in at keep and section are
// the text they are deduplicated against, budget their budget.
func reminderTokens(in Input, section string, keep []int, budget int) int {
	var text strings.Builder
	text.WriteString(section)
	for _, i := range keep {
		text.WriteString(in.Messages[i].Text())
	}
	n := 0
	for _, m := range Reminders(in.Reminders, text.String(), budget) {
		n += MessageTokens(m)
	}
	return n
}

// fitReminders returns the reminder budget of a cut that leaves the level
// at cut before the reminders: the input's budget, and under a target no
// more than the room left below it, though never under
// [minReminderBudget], so the checklist and the working set still come
// back.
func fitReminders(in Input, cut int) int {
	budget := reminderBudget(in)
	if g := goal(in); g < in.Threshold {
		room := in.unscaled(g - cut)
		budget = min(budget, max(room, minReminderBudget))
	}
	return budget
}

// summaryCall estimates the input of the summary request for p, in the
// units of the level, and the part of it the provider's cache would not
// serve: a cache-aligned replay hits up to the first message the pure
// layers changed and misses the rest and the instruction; a flattened
// request misses entirely.
func summaryCall(in Input, p Plan, firstChanged int) (total, miss int) {
	if CacheAligned(in, p) {
		miss = instructionReserve
		if firstChanged >= 0 {
			miss += sum(p.Tokens[firstChanged:])
		}
		return p.PureTokensAfter + in.scaled(instructionReserve), in.scaled(miss)
	}
	for _, m := range flatRequest(in, p, p.Summarize, "").Messages {
		total += tokens.MessageOverhead + tokens.Count(m.Content)
	}
	return in.scaled(total), in.scaled(total)
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// SummarySection returns the block merged into the system prompt for a
// model-written summary.
func SummarySection(summary string) string {
	return SummaryHeading + "\n" + summaryLead + "\n\n" + strings.TrimSpace(summary)
}

// MemorySection returns the block merged into the system prompt when the
// workspace MEMORY.md stands in for the summary.
func MemorySection(memory string) string {
	return memoryHeading + "\n" + memoryLead + "\n\n" + strings.TrimSpace(memory)
}

// describe names a message in a few words for previews.
func describe(m transcript.Message) string {
	switch m.Role {
	case transcript.Tool:
		return "result of " + orTool(m.ToolName)
	case transcript.Assistant:
		if len(m.ToolCalls) > 0 {
			names := make([]string, len(m.ToolCalls))
			for i, c := range m.ToolCalls {
				names[i] = orTool(c.Name)
			}
			return "assistant calls " + strings.Join(names, ", ")
		}
		return "assistant reply"
	}
	if m.Kind != transcript.KindChat {
		return "user (" + string(m.Kind) + ")"
	}
	return "user text"
}

func orTool(name string) string {
	if name == "" {
		return "tool"
	}
	return name
}
