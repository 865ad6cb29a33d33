package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
)

// Model is the demo's scripted model as an llm.Model that runs in
// process: no server, no port, no network. Each call waits the pace,
// streams the script's reasoning and text in small pieces through
// Callbacks.OnDelta, and returns a Response with token usage the way an
// OpenAI-compatible server reports it: prompt and completion tokens
// counted with the engine's tokenizer, and cache hits from a simulated
// prefix cache (the longest run of leading tools and messages shared with
// an earlier request, in whole blocks of 64 tokens). A Model is safe for
// concurrent use; calls share one cache, as the sessions of one server do.
type Model struct {
	pace time.Duration

	mu     sync.Mutex
	calls  int
	seen   [][]uint64     // piece hashes of earlier requests, newest last
	counts map[uint64]int // token count of each piece seen
	seed   maphash.Seed
}

// cacheUnit is the granularity of the simulated prompt cache, in tokens.
const cacheUnit = 64

// The simulated cache keeps the prompts of this many recent requests, and
// the token counts of at most countsKept pieces.
const (
	promptsKept = 64
	countsKept  = 1 << 14
)

// pieceBytes is the largest piece of streamed text.
const pieceBytes = 12

// NewModel returns the demo model, pausing pace before each answer (0
// for tests).
func NewModel(pace time.Duration) *Model {
	return &Model{pace: pace, counts: map[uint64]int{}, seed: maphash.MakeSeed()}
}

// Stream answers req with the script. It fails only with the context's
// error, when ctx ends before the answer is complete.
func (m *Model) Stream(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
	start := time.Now()
	q := requestOf(req)
	r := Answer(q)
	if m.pace > 0 {
		t := time.NewTimer(m.pace)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	for _, d := range deltas(r) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cb.OnDelta != nil {
			cb.OnDelta(d)
		}
	}
	resp := &llm.Response{Content: r.Content, Reasoning: r.Reasoning, FinishReason: "stop", HasUsage: true, Attempts: 1}
	m.mu.Lock()
	n := m.calls
	m.calls++
	resp.Usage = m.account(req, q, r)
	m.mu.Unlock()
	for i, c := range r.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("call_demo_%d_%d", n, i), Name: c.Name, Arguments: c.Arguments})
	}
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	resp.Duration = time.Since(start)
	return resp, nil
}

// requestOf is what the script reads of req.
func requestOf(req llm.Request) Request {
	var out Request
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, t.Name)
	}
	for _, w := range req.Messages {
		m := Message{Role: w.Role, Content: w.Content, ToolCallID: w.ToolCallID}
		for _, p := range w.Parts {
			m.Content += p.Text
		}
		for _, c := range w.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out.Messages = append(out.Messages, m)
	}
	return out
}

// deltas cuts the reply's reasoning and text into the pieces a server
// would stream, reasoning first.
func deltas(r Reply) []llm.Delta {
	var out []llm.Delta
	for _, p := range pieces(r.Reasoning) {
		out = append(out, llm.Delta{Reasoning: p})
	}
	for _, p := range pieces(r.Content) {
		out = append(out, llm.Delta{Content: p})
	}
	return out
}

// pieces splits s into pieces of at most pieceBytes bytes without
// splitting a character.
func pieces(s string) []string {
	var out []string
	for s != "" {
		end := min(pieceBytes, len(s))
		for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 {
			_, end = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// account counts the usage of answering req (which the script read as q)
// with r, and adds req's prompt to the simulated cache. The prompt is
// counted as a chat template renders it: each tool's JSON, then each
// message's role, text and calls. m.mu is held.
func (m *Model) account(req llm.Request, q Request, r Reply) llm.Usage {
	var parts []string
	for _, t := range req.Tools {
		b, _ := json.Marshal(t)
		parts = append(parts, string(b))
	}
	for _, msg := range q.Messages {
		var b strings.Builder
		b.WriteString(msg.Role + "\n" + msg.ToolCallID + "\n" + msg.Content)
		for _, c := range msg.ToolCalls {
			b.WriteString("\n" + c.Name + " " + c.Arguments)
		}
		parts = append(parts, b.String())
	}
	hashes := make([]uint64, len(parts))
	sizes := make([]int, len(parts))
	prompt := 0
	for i, p := range parts {
		hashes[i] = maphash.String(m.seed, p)
		sizes[i] = m.count(hashes[i], p)
		if i >= len(req.Tools) {
			sizes[i] += tokens.MessageOverhead
		}
		prompt += sizes[i]
	}
	shared := 0 // leading pieces shared with an earlier request
	for _, s := range m.seen {
		n := 0
		for n < len(s) && n < len(hashes) && s[n] == hashes[n] {
			n++
		}
		shared = max(shared, n)
	}
	hit := 0
	for _, n := range sizes[:shared] {
		hit += n
	}
	hit -= hit % cacheUnit
	m.seen = append(m.seen, hashes)
	if len(m.seen) > promptsKept {
		m.seen = m.seen[1:]
	}
	completion := tokens.Count(r.Content) + tokens.Count(r.Reasoning)
	for _, c := range r.ToolCalls {
		completion += tokens.Count(c.Name) + tokens.Count(c.Arguments)
	}
	return llm.Usage{PromptTokens: prompt, CompletionTokens: completion,
		CacheHitTokens: hit, CacheMissTokens: prompt - hit, CacheReported: true}
}

// count returns the token count of piece p, whose hash is h, counting it
// once.
func (m *Model) count(h uint64, p string) int {
	if n, ok := m.counts[h]; ok {
		return n
	}
	if len(m.counts) >= countsKept {
		clear(m.counts)
	}
	n := tokens.Count(p)
	m.counts[h] = n
	return n
}
