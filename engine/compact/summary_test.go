package compact

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
)

// checkRequest fails the test when req would be rejected by a strict
// server: a system message after index 0 or a tool call without its result.
func checkRequest(t *testing.T, req llm.Request) {
	t.Helper()
	pending := map[string]bool{}
	for i, m := range req.Messages {
		if m.Role == chat.RoleSystem && i > 0 {
			t.Errorf("system message at index %d", i)
		}
		if m.Role == chat.RoleTool {
			if !pending[m.ToolCallID] {
				t.Errorf("message %d answers unknown call %q", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			t.Errorf("message %d arrives with %d calls unanswered", i, len(pending))
		}
		for _, c := range m.ToolCalls {
			pending[c.ID] = true
		}
	}
	if len(pending) > 0 {
		t.Error("request ends with unanswered calls")
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role != chat.RoleUser || !strings.Contains(last.Content, "900 words") {
		t.Errorf("last message is not the instruction: %+v", last)
	}
	if req.MaxTokens < MinOutput || req.MaxTokens > SummaryTokens || req.Temperature == nil || *req.Temperature != SummaryTemperature {
		t.Errorf("limits: max %d temperature %v", req.MaxTokens, req.Temperature)
	}
}

func wire(msgs []transcript.Message) []chat.Message {
	log := transcript.NewAppendLog(tokens.Count, transcript.WireRules{FoldTurnMeta: true})
	for _, m := range msgs {
		log.Append(m)
	}
	return log.AppendWire(nil)
}

func TestSummaryRequest(t *testing.T) {
	tools := []chat.Tool{{Name: "read_file"}}
	cases := []struct {
		name    string
		window  int
		level   int
		wire    bool
		replay  bool
		comment string
	}{
		{"1M window with room replays", 1_000_000, 0, true, true, ""},
		{"window under 500K flattens", 400_000, 0, true, false, ""},
		{"replay over 85 % of the window flattens", 1_000_000, 900_000, true, false, ""},
		{"replay without cached wire renders afresh", 1_000_000, 0, false, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := sessionInput()
			in.Threshold = 4000
			in.Window = c.window
			if c.level > 0 {
				in.Level = c.level
			}
			if c.wire {
				in.Wire = wire(in.Messages)
				in.Wire[0].Content = "cached bytes of message 0"
			}
			p := PlanCascade(in)
			req := SummaryRequest(in, p, "deepseek-chat", "SESSION SYSTEM", tools)
			checkRequest(t, req)
			if got := CacheAligned(in, p); got != c.replay {
				t.Fatalf("CacheAligned = %v; want %v", got, c.replay)
			}
			if c.replay {
				if req.Messages[0].Content != "SESSION SYSTEM" || len(req.Tools) != 1 || len(req.Messages) != len(in.Messages)+2 {
					t.Fatalf("replay: %d messages, system %q, %d tools", len(req.Messages), req.Messages[0].Content, len(req.Tools))
				}
				if c.wire && req.Messages[1].Content != "cached bytes of message 0" {
					t.Errorf("replay did not use the cached wire: %q", req.Messages[1].Content)
				}
				return
			}
			if len(req.Messages) != 2 || req.Tools != nil || req.Messages[0].Content != strings.TrimSpace(SummarySystemPrompt) {
				t.Fatalf("flattened: %d messages, %d tools", len(req.Messages), len(req.Tools))
			}
			body := req.Messages[1].Content
			for _, want := range []string{"Assistant called grep {\"path\":\"pkg\",\"pattern\":\"Evict\"}", "Tool (grep): "} {
				if !strings.Contains(body, want) {
					t.Errorf("flattened transcript lacks %q", want)
				}
			}
			if strings.Contains(body, "agent_status") {
				t.Error("status bar was flattened into the transcript")
			}
			if strings.Contains(body, "All tests pass now.") {
				t.Error("pinned message was flattened")
			}
		})
	}
	t.Run("previous summary is carried into the flattened request", func(t *testing.T) {
		in := sessionInput()
		in.Threshold, in.Window = 4000, 128_000
		in.PreviousSummary = "Earlier: the cache uses a doubly linked list."
		req := SummaryRequest(in, PlanCascade(in), "m", "", nil)
		if !strings.Contains(req.Messages[1].Content, "doubly linked list") {
			t.Error("previous summary missing")
		}
	})
	t.Run("flattened tool output keeps head and tail", func(t *testing.T) {
		got := flatLine(failure(call("x", "run_shell", "{}"), "START"+strings.Repeat("-", 10_000)+"panic: END"))
		if !strings.HasPrefix(got, "Tool (run_shell, failed): START") || !strings.HasSuffix(got, "panic: END") || !strings.Contains(got, "chars omitted") {
			t.Errorf("flat line = %q…", got[:80])
		}
	})
}

func TestSummarize(t *testing.T) {
	base := func() (Input, Plan) {
		in := sessionInput()
		in.Threshold, in.Window = 4000, 128_000
		return in, PlanCascade(in)
	}
	tooLong := &llm.APIError{Status: 400, Code: "context_length_exceeded", Message: "too long"}
	t.Run("returns the trimmed summary", func(t *testing.T) {
		in, p := base()
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			checkRequest(t, req)
			return &llm.Response{Content: "  the summary \n"}, nil
		})
		got, err := Summarize(context.Background(), m, in, p, "m", "sys", nil)
		if err != nil || got != "the summary" {
			t.Errorf("Summarize = %q, %v", got, err)
		}
	})
	t.Run("too long: drops the oldest 20 % and retries", func(t *testing.T) {
		in, p := base()
		var sizes []int
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			sizes = append(sizes, strings.Count(req.Messages[len(req.Messages)-1].Content, "\n\n"))
			if len(sizes) < 3 {
				return nil, tooLong
			}
			if strings.Contains(req.Messages[1].Content, "Please fix the flaky") {
				t.Error("oldest message still sent after two retries")
			}
			return &llm.Response{Content: "ok"}, nil
		})
		got, err := Summarize(context.Background(), m, in, p, "m", "sys", nil)
		if err != nil || got != "ok" || len(sizes) != 3 || !(sizes[0] > sizes[1] && sizes[1] > sizes[2]) {
			t.Errorf("Summarize = %q, %v after sizes %v", got, err, sizes)
		}
	})
	t.Run("gives up after 4 retries", func(t *testing.T) {
		in, p := base()
		// Forty entries, so dropping a fifth four times never runs out.
		p.Summarize = make([]int, 0, 40)
		for range 40 {
			p.Summarize = append(p.Summarize, 0)
		}
		calls := 0
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			calls++
			return nil, tooLong
		})
		_, err := Summarize(context.Background(), m, in, p, "m", "sys", nil)
		if err == nil || calls != summaryRetries+1 || !llm.IsContextLengthExceeded(err) {
			t.Errorf("calls %d, err %v", calls, err)
		}
	})
	t.Run("empty answer is an error", func(t *testing.T) {
		in, p := base()
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			return &llm.Response{Content: " \n"}, nil
		})
		if _, err := Summarize(context.Background(), m, in, p, "m", "sys", nil); err == nil || !strings.Contains(err.Error(), "empty summary") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("other failures are passed on", func(t *testing.T) {
		in, p := base()
		boom := errors.New("boom")
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) { return nil, boom })
		if _, err := Summarize(context.Background(), m, in, p, "m", "sys", nil); !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("long summary is capped", func(t *testing.T) {
		in, p := base()
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			return &llm.Response{Content: strings.Repeat("token ", 4000)}, nil
		})
		got, err := Summarize(context.Background(), m, in, p, "m", "sys", nil)
		if err != nil || tokens.Count(got) > SummaryTokens || !strings.HasSuffix(got, "[summary cut at 2,048 tokens]") {
			t.Errorf("summary of %d tokens, err %v", tokens.Count(got), err)
		}
	})
	t.Run("nil model and nothing to summarise", func(t *testing.T) {
		in, p := base()
		if _, err := Summarize(context.Background(), nil, in, p, "m", "", nil); err == nil {
			t.Error("nil model accepted")
		}
		p.Summarize = nil
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			return &llm.Response{Content: "x"}, nil
		})
		if _, err := Summarize(context.Background(), m, in, p, "m", "", nil); err == nil || !strings.Contains(err.Error(), "nothing to summarise") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		in, p := base()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
			return &llm.Response{Content: "x"}, nil
		})
		if _, err := Summarize(ctx, m, in, p, "m", "", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestCutTokens(t *testing.T) {
	cases := []struct {
		name  string
		s     string
		limit int
	}{
		{"short text untouched", "hello", 10},
		{"multi-byte runes", strings.Repeat("日本語のテキスト ", 500), 100},
		{"tiny limit", strings.Repeat("word ", 100), 3},
		{"zero limit", "word word", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := cutTokens(c.s, c.limit, " [cut]")
			if tokens.Count(got) > max(c.limit, tokens.Count("[cut]")) {
				t.Errorf("%d tokens over limit %d", tokens.Count(got), c.limit)
			}
			if !strings.HasPrefix(c.s, strings.TrimSuffix(got, " [cut]")) && got != "[cut]" {
				t.Errorf("not a prefix: %q", got)
			}
		})
	}
}

// A summary is asked to be at most half of what it replaces, and never
// more than the window has room for after the request.
func TestSummaryOutputFitsTheWindowAndWhatItReplaces(t *testing.T) {
	in := sessionInput()
	in.Threshold, in.Window = 4000, 128_000
	p := PlanCascade(in)
	replaced := 0
	for _, i := range p.Summarize {
		replaced += p.Tokens[i]
	}
	var asked []int
	m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		asked = append(asked, req.MaxTokens)
		return &llm.Response{Content: "the summary"}, nil
	})
	if _, err := Summarize(context.Background(), m, in, p, "m", "sys", nil); err != nil {
		t.Fatal(err)
	}
	if want := min(SummaryTokens, max(in.scaled(replaced)/2, summaryFloor)); len(asked) != 1 || asked[0] != want {
		t.Errorf("a summary of %d tokens asked for %v; want %d", replaced, asked, want)
	}
	req := SummaryRequest(in, p, "m", "sys", nil)
	if got := OutputRoom(req, 2_000, SummaryTokens); got >= SummaryTokens || got < MinOutput {
		t.Errorf("a 2,000-token window leaves room for %d tokens of a %d-token summary", got, SummaryTokens)
	}
	if got := OutputRoom(req, 0, SummaryTokens); got != SummaryTokens {
		t.Errorf("an unknown window gives %d; want the limit", got)
	}
}
