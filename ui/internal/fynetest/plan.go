package fynetest

import (
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/transcript"
)

// SamplePlan is a compaction plan over five messages stamped now, for
// the tests of the views that show one: the
// micro layer clears a tool result, a summary would replace the middle
// three messages (kept verbatim 2, summarised and recallable 3).
func SamplePlan(now time.Time) (compact.Plan, []transcript.Message) {
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
		Fidelity: compact.Fidelity{Verbatim: 2, Summarised: 3, Recallable: 3},
		Cache: compact.CacheCost{InvalidatedTokens: 21_000, SystemChanges: true, FirstChanged: 2, SavedPerRequest: 63_200,
			MissHitRatio: 10, HitPrice: 0.028, MissPrice: 0.28, BreakEven: 2.99},
	}
	return plan, msgs
}
