package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// instantModel answers at once with a short text and a usage record, so a
// benchmark of Run measures only the engine: assembly, token accounting and
// the store commits.
func instantModel() llm.Model {
	return llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		return &llm.Response{Content: "ok", HasUsage: true, Usage: llm.Usage{PromptTokens: 1000 + len(req.Messages), CompletionTokens: 1}}, nil
	})
}

// seeded returns a session whose log holds about want tokens.
func seeded(b *testing.B, want int) *Session {
	b.Helper()
	st, err := storage.Open(filepath.Join(b.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	// Cycles and compaction off: this measures the plain turn, not a rewrite.
	cfg := Config{Store: st, ModelChoice: ModelChoice{Model: instantModel(), ModelName: "deepseek-chat"}, Now: func() time.Time { return day }, CycleAt: -1, Compaction: rewrite.Off}
	s, err := Create(cfg, "bench", b.TempDir(), "")
	if err != nil {
		b.Fatal(err)
	}
	para := strings.Repeat("The function reads the configuration file and returns a parsed value. ", 28) // ~400 tokens
	var batch []transcript.Message
	for i := 0; s.log.Tokens() < want; i++ {
		c := transcript.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.go"}`, i)}
		batch = append(batch[:0],
			transcript.AssistantReply("", "", []transcript.ToolCall{c}, day),
			transcript.ToolResult(c, resultText(i, para), false, day))
		if err := s.commit(batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// resultText makes every other result identical, so wire dedupe sends
// half of them as references, as in a session that re-reads files.
func resultText(i int, para string) string {
	if i%2 == 1 {
		return para
	}
	return fmt.Sprintf("%d %s", i, para)
}

// BenchmarkTurnOverhead measures one user turn with an instant model on
// transcripts of growing size. Its cost must not grow with the transcript.
func BenchmarkTurnOverhead(b *testing.B) {
	for _, size := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dK", size/1000), func(b *testing.B) {
			s := seeded(b, size)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Run(ctx, "next step"); err != nil {
					b.Fatal(err)
				}
			}
			if s.log.Tokens() < size {
				b.Fatalf("the transcript shrank to %d tokens: the benchmark measured a rewrite", s.log.Tokens())
			}
			b.ReportMetric(float64(s.log.Tokens())/1000, "ktokens")
		})
	}
}

// BenchmarkAssemble measures building the request alone (no store).
func BenchmarkAssemble(b *testing.B) {
	for _, size := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dK", size/1000), func(b *testing.B) {
			s := seeded(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := s.req.Assemble(s.model().ModelName, "")
				lvl, _ := s.level()
				if len(req.Messages) == 0 || lvl == 0 {
					b.Fatal("empty request")
				}
			}
		})
	}
}

// BenchmarkCompact1M applies a manual compaction to a session holding a
// 1M-token transcript: planning, the (instant) summary call, Apply, and the
// recorded rebuild that rewrites the log in the store. Run it with
// -benchtime 1x; seeding the session is not timed.
func BenchmarkCompact1M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := seeded(b, 1_000_000)
		m := *s.model()
		m.Model = llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			return &llm.Response{Content: "Summary: files were read; nothing changed."}, nil
		})
		s.chosen.Store(&m)
		before := s.log.Tokens()
		b.StartTimer()
		res, err := s.Compaction().Apply(context.Background())
		if err != nil || !res.Applied {
			b.Fatalf("compact: %+v, %v", res, err)
		}
		b.StopTimer()
		b.ReportMetric(float64(before)/1000, "ktokens-before")
		b.ReportMetric(float64(s.log.Tokens())/1000, "ktokens-after")
	}
}
