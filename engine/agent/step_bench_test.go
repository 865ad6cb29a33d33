package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// instantAnswer is the stream an instantServer sends for every request: a
// short text, a finish reason and a usage record.
const instantAnswer = "data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"}}]}\n\n" +
	"data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":1,\"total_tokens\":1001}}\n\n" +
	"data: [DONE]\n\n"

// instantServer is an OpenAI-compatible endpoint that reads the whole
// request body and answers at once with instantAnswer. Unlike llmtest's
// server it does not parse, render or cache the prompt, so the time a step
// takes against it is the engine's and its HTTP client's, not a simulated
// provider's. It records the size of the last body it read.
func instantServer(b *testing.B) (url string, last *atomic.Int64) {
	b.Helper()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read, _ := io.Copy(io.Discard, r.Body)
		n.Store(read)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, instantAnswer)
	}))
	b.Cleanup(ts.Close)
	return ts.URL + "/v1", &n
}

// seededMessages returns a session talking to the model at url (over real
// HTTP, through llm.OpenAI and go-openai) whose log holds n messages: pairs
// of a read_file call and its result, half of the results repeats (sent as
// references), as in a session that reads and re-reads files.
func seededMessages(b *testing.B, url string, n int, defaults bool) *Session {
	b.Helper()
	st, err := storage.Open(filepath.Join(b.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	model := llm.NewOpenAI(llm.Config{BaseURL: url, APIKey: "sk-bench"})
	// Cycles and compaction off: this measures the plain step, not a rewrite.
	cfg := Config{Store: st, ModelChoice: ModelChoice{Model: model, ModelName: "deepseek-chat"}, Now: func() time.Time { return day }, CycleAt: -1, Compaction: rewrite.Off}
	if defaults {
		// Compaction and cycles as configured by default, in a window so
		// large that neither is due: the step makes their checks only.
		cfg.CycleAt, cfg.Compaction, cfg.ContextWindow = 0, "", 4_000_000
	}
	s, err := Create(cfg, "bench", b.TempDir(), "")
	if err != nil {
		b.Fatal(err)
	}
	para := strings.Repeat("The function reads the configuration file and returns a parsed value. ", 7) // ~100 tokens
	batch := make([]transcript.Message, 0, 256)
	for i := 0; s.log.Len() < n; i++ {
		c := transcript.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.go"}`, i)}
		batch = append(batch,
			transcript.AssistantReply("", "", []transcript.ToolCall{c}, day),
			transcript.ToolResult(c, resultText(i, para), false, day))
		if len(batch) == cap(batch) || s.log.Len()+len(batch) >= n {
			if err := s.commit(batch, nil); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return s
}

// BenchmarkStepOverhead measures the engine's cost of one model step: a
// user turn whose model call is answered at once, sent through llm.OpenAI
// and go-openai over real HTTP to a local server that only reads the body.
// It runs on a fresh session and on one holding 10,000 messages, with
// compaction and cycles off and (defaults) as configured by default in a
// window where neither is due; the difference between the sizes is what a
// step costs per message of history.
//
//	go test ./engine/agent/ -run '^$' -bench StepOverhead -benchtime 200x -count 5
func BenchmarkStepOverhead(b *testing.B) {
	for _, c := range []struct {
		n        int
		defaults bool
	}{{0, false}, {10_000, false}, {0, true}, {10_000, true}} {
		name := fmt.Sprintf("off/messages=%d", c.n)
		if c.defaults {
			name = fmt.Sprintf("defaults/messages=%d", c.n)
		}
		b.Run(name, func(b *testing.B) {
			n := c.n
			url, body := instantServer(b)
			s := seededMessages(b, url, n, c.defaults)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Run(ctx, "next step"); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if s.log.Len() < n {
				b.Fatalf("the log shrank to %d messages: the benchmark measured a rewrite", s.log.Len())
			}
			b.ReportMetric(float64(body.Load())/1024, "KiB/request")
			b.ReportMetric(float64(s.log.Tokens())/1000, "ktokens")
		})
	}
}
