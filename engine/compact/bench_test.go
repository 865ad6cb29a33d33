package compact

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

// million builds a ~1M-token transcript: tool-heavy turns with some
// repeated reads, as a long coding session has.
func million() Input {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	body := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 60) // ~1,200 tokens
	var msgs []transcript.Message
	var toks []int
	add := func(m transcript.Message, n int) { msgs = append(msgs, m); toks = append(toks, n) }
	total := 0
	for i := 0; total < 1_000_000; i++ {
		if i%10 == 0 {
			add(transcript.UserText("<turn_meta>\ndate: 2026-11-30\n</turn_meta>", fmt.Sprintf("step %d: continue with pkg/f%d.go", i, i), at), 30)
		}
		path := fmt.Sprintf("pkg/f%d.go", i%97) // files are re-read now and then
		c := transcript.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, path)}
		add(transcript.AssistantReply("", "", []transcript.ToolCall{c}, at), 20)
		r := transcript.ToolResult(c, path+"\n"+body, false, at)
		r.Args = c.Arguments
		add(r, 1_200)
		total += 1_250
	}
	add(transcript.AssistantReply("done", "", nil, at), 5)
	return Input{
		Messages: msgs, Tokens: toks, PrefixTokens: 8_000, Level: total + 8_000,
		Threshold: Threshold(1_000_000, true), Window: 1_000_000,
		WorkingSet: []string{"pkg/f1.go", "pkg/f2.go", "pkg/f3.go"}, Now: at.Add(10 * time.Minute),
	}
}

// BenchmarkPlan1M plans the cascade over a 1M-token transcript (pins,
// micro-compact, prune, the summary forecast and the preview's cache cost).
func BenchmarkPlan1M(b *testing.B) {
	in := million()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := PlanCascade(in)
		if p.TokensAfter >= p.TokensBefore {
			b.Fatal("the plan frees nothing")
		}
	}
	b.ReportMetric(float64(len(in.Messages)), "messages")
}

// BenchmarkApply1M plans and applies a compaction over a 1M-token
// transcript (the model call itself is not measured; here prune is enough).
func BenchmarkApply1M(b *testing.B) {
	in := million()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := PlanCascade(in)
		res := Apply(in, p, "Summary: the handlers were read and nothing was changed.")
		if res.TokensAfter >= res.TokensBefore {
			b.Fatalf("apply freed nothing: %d -> %d", res.TokensBefore, res.TokensAfter)
		}
	}
}

// BenchmarkSummaryApply1M forces the summary path on the same transcript:
// everything unpinned is replaced by a summary.
func BenchmarkSummaryApply1M(b *testing.B) {
	in := million()
	in.Force = true
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := PlanCascade(in)
		res := Apply(in, p, "Summary: the handlers were read and nothing was changed.")
		if len(res.Messages) >= len(in.Messages)/2 {
			b.Fatalf("the summary path kept %d of %d messages", len(res.Messages), len(in.Messages))
		}
	}
}

// BenchmarkPlanAuto128K weighs an automatic compaction of a 128K-window
// session at its threshold: the cheap plan to the target, the deep plan with
// its summary-request estimate, and the decision. It runs before every
// request while the level is over the threshold and the compaction waits.
func BenchmarkPlanAuto128K(b *testing.B) {
	in := toolHeavy(60, 1_000)
	in.Threshold, in.Window = Threshold(128_000, true), 128_000
	f := Forecast{Ceiling: Ceiling(in.Window, in.Threshold, CycleThreshold(in.Window, DefaultCycleAt)), Growth: 350}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p := PlanAuto(in, f); p.Auto == nil || len(p.Auto.Candidates) == 0 {
			b.Fatal("no candidate was weighed")
		}
	}
}
