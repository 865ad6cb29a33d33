package llmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// CacheRule selects how the server decides the prompt-cache hit of a
// request. Either way the hit is reported in usage as
// prompt_cache_hit_tokens and prompt_tokens_details.cached_tokens (see
// WithUsageFields) and recorded in Recorded.Hit.
type CacheRule int

const (
	// CacheLCP is the default rule: the hit is the longest common token
	// prefix with any earlier accepted request of the same model, rounded
	// down to the cache unit (see WithCacheUnit).
	CacheLCP CacheRule = iota
	// CacheUnits simulates DeepSeek V4's persisted prefix units. A unit is
	// a whole token prefix stored in the model's cache, and a request hits
	// only the longest unit that is a prefix of its own tokens, with no
	// further rounding. After each accepted request the server persists:
	// its input I; its input followed by its output, I+O; the longest
	// common prefix of I with the previous accepted request's input of the
	// same model (so a shared prefix becomes hittable only from the request
	// after the one that revealed it); and every prefix of I and of I+O
	// whose length is a multiple of the unit interval (see
	// WithUnitInterval).
	//
	// I+O is the conversation with the reply appended as an assistant
	// message, rendered by the same template without a generation prompt:
	// the start of the next prompt of a client that appends the reply
	// verbatim (content, reasoning_content and tool calls) and continues.
	// When the template renders the input but fails on the reply, I+O is
	// approximated by the rendered input followed by the reply's
	// reasoning, content and tool call names and arguments.
	CacheUnits
)

// DefaultUnitInterval is the fixed token interval at which CacheUnits
// persists units inside long inputs and outputs, unless WithUnitInterval
// says otherwise.
const DefaultUnitInterval = 2048

// String returns the Go name of the rule.
func (r CacheRule) String() string {
	switch r {
	case CacheLCP:
		return "CacheLCP"
	case CacheUnits:
		return "CacheUnits"
	}
	return fmt.Sprintf("CacheRule(%d)", int(r))
}

func (r CacheRule) valid() bool { return r == CacheLCP || r == CacheUnits }

// WithCacheRule selects the prompt-cache rule (default CacheLCP). An
// unknown rule makes every chat request fail with HTTP 500 naming it.
func WithCacheRule(rule CacheRule) Option { return func(c *config) { c.cacheRule = rule } }

// WithUnitInterval sets the token interval at which CacheUnits persists
// units inside long inputs and outputs (default DefaultUnitInterval). A
// value below 1 persists no interval units at all. CacheLCP ignores it.
func WithUnitInterval(k int) Option { return func(c *config) { c.unitInterval = max(k, 0) } }

// ruleError is the HTTP 500 message for an unknown cache rule.
func ruleError(r CacheRule) string {
	return fmt.Sprintf("llmtest: unknown cache rule %v; use CacheLCP or CacheUnits.", r)
}

// unitRequest is what CacheUnits needs from one accepted request. It is
// computed before the server lock is taken, since hashing a long prompt
// and rendering the reply are the expensive parts.
type unitRequest struct {
	// in holds the prefix hashes of the input tokens: in[L] identifies
	// tokens [0, L), so len(in) is the input length plus one.
	in []uint64
	// out holds the prefix hashes of the input+output tokens, the same way.
	out []uint64
}

// newUnitRequest hashes the input tokens toks (the tokenized rd.text of
// request p) and the input+output sequence for reply.
func newUnitRequest(p *parsed, rd rendering, toks []string, reply Reply) *unitRequest {
	in := extendHashes(make([]uint64, 1, len(toks)+1), toks)
	text := inputOutputText(p, rd, reply)
	// Appending text to rd.text changes at most its last token, so the
	// hashes up to there are shared and only the tail is tokenized again.
	if n := len(toks); n > 0 && strings.HasPrefix(text, rd.text) {
		from := len(rd.text) - len(toks[n-1])
		tail := Tokenize(text[from:])
		out := make([]uint64, n, n+len(tail))
		copy(out, in[:n])
		return &unitRequest{in: in, out: extendHashes(out, tail)}
	}
	return &unitRequest{in: in, out: extendHashes(make([]uint64, 1), Tokenize(text))}
}

// inputOutputText renders the conversation of p followed by reply as an
// assistant message, without a generation prompt, with the template that
// rendered the input (see CacheUnits for the fallback).
func inputOutputText(p *parsed, rd rendering, reply Reply) string {
	raw, m := replyMessage(reply)
	withReply := &parsed{req: p.req, rawMsgs: append(slices.Clip(p.rawMsgs), raw), rawTools: p.rawTools}
	withReply.req.Messages = append(slices.Clip(p.req.Messages), m)
	if ro := renderWith(rd.template, withReply, false); !ro.fellBack {
		return ro.text
	}
	var b strings.Builder
	b.WriteString(rd.text)
	b.WriteString(reply.Reasoning)
	b.WriteString(reply.Content)
	for _, tc := range reply.ToolCalls {
		b.WriteString(tc.Name)
		b.WriteString(tc.Arguments)
	}
	return b.String()
}

// replyMessage returns reply as the assistant message a client appends to
// its history, both as request JSON and parsed: the message of the
// non-streamed answer, verbatim.
func replyMessage(reply Reply) (json.RawMessage, Message) {
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	wire := struct {
		Role             string  `json:"role"`
		Content          *string `json:"content"`
		ReasoningContent string  `json:"reasoning_content,omitempty"`
		ToolCalls        []call  `json:"tool_calls,omitempty"`
	}{Role: "assistant", ReasoningContent: reply.Reasoning}
	if reply.Content != "" || len(reply.ToolCalls) == 0 { // as the answer sends it
		wire.Content = &reply.Content
	}
	m := Message{Role: "assistant", Content: reply.Content, ReasoningContent: reply.Reasoning}
	for _, tc := range reply.ToolCalls {
		wire.ToolCalls = append(wire.ToolCalls, call{ID: tc.ID, Type: "function", Function: function{Name: tc.Name, Arguments: tc.Arguments}})
		m.ToolCalls = append(m.ToolCalls, tc)
	}
	raw, err := json.Marshal(wire)
	if err != nil { // only strings inside: cannot happen
		raw = []byte(`{"role":"assistant","content":""}`)
	}
	return raw, m
}

// unitKey identifies one persisted unit: a token prefix of length n whose
// prefix hash is h.
type unitKey struct {
	n int
	h uint64
}

// unitCache holds the persisted prefix units of one model.
type unitCache struct {
	units   map[unitKey]struct{}
	lengths []int    // distinct unit lengths, ascending
	prev    []uint64 // input prefix hashes of the previous accepted request
	prevOut int      // input+output length of the previous accepted request
}

// lookup returns the length of the longest persisted unit that is a prefix
// of the tokens whose prefix hashes are in, or 0. It costs one map probe
// per distinct unit length not above the input length.
func (c *unitCache) lookup(in []uint64) int {
	i, _ := slices.BinarySearch(c.lengths, len(in)) // lengths[:i] are <= len(in)-1
	for j := i - 1; j >= 0; j-- {
		n := c.lengths[j]
		if _, ok := c.units[unitKey{n, in[n]}]; ok {
			return n
		}
	}
	return 0
}

// persist stores the units of a served request (see CacheUnits); interval
// is the fixed unit interval, below 1 for none.
func (c *unitCache) persist(r *unitRequest, interval int) {
	for _, hs := range [][]uint64{r.in, r.out} {
		c.add(len(hs)-1, hs[len(hs)-1])
		for n := interval; interval > 0 && n < len(hs); n += interval {
			c.add(n, hs[n])
		}
	}
	if c.prev != nil {
		n := commonHashPrefix(c.prev, r.in)
		c.add(n, r.in[n])
	}
	c.prev, c.prevOut = r.in, len(r.out)-1
}

// add stores the unit of length n with prefix hash h; the empty prefix is
// never a unit.
func (c *unitCache) add(n int, h uint64) {
	if n <= 0 {
		return
	}
	if c.units == nil {
		c.units = map[unitKey]struct{}{}
	}
	c.units[unitKey{n, h}] = struct{}{}
	if i, found := slices.BinarySearch(c.lengths, n); !found {
		c.lengths = slices.Insert(c.lengths, i, n)
	}
}

// serveUnits returns the hit and the ideal hit of r under CacheUnits and
// persists r's units. The ideal hit is the input+output length of the
// previous accepted request of the model (0 for the first one and after
// MarkReset), the hit of a client that sends that request's conversation
// and reply back unchanged and appends to it; the caller caps both at the
// prompt length. The caller holds s.mu.
func (s *Server) serveUnits(model string, r *unitRequest) (hit, ideal int) {
	if s.units == nil {
		s.units = map[string]*unitCache{}
	}
	c := s.units[model]
	if c == nil {
		c = &unitCache{}
		s.units[model] = c
	}
	hit = c.lookup(r.in)
	if c.prev != nil && !s.resetNext {
		ideal = c.prevOut
	}
	c.persist(r, s.cfg.unitInterval)
	return hit, ideal
}

// commonHashPrefix returns the longest L with a[L] == b[L], the length of
// the common token prefix of two prefix-hash slices. Prefix hashes agree
// up to the first differing token and (barring 64-bit collisions) not
// after, so a binary search finds it.
func commonHashPrefix(a, b []uint64) int {
	lo, hi := 0, min(len(a), len(b))-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if a[mid] == b[mid] {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// extendHashes appends to hs (which must hold at least the hash of the
// empty prefix, 0) the running prefix hash after each token of toks.
func extendHashes(hs []uint64, toks []string) []uint64 {
	h := hs[len(hs)-1]
	for _, t := range toks {
		h = mix64(h ^ tokenHash(t))
		hs = append(hs, h)
	}
	return hs
}

// tokenHash is 64-bit FNV-1a over the token's bytes.
func tokenHash(t string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(t); i++ {
		h ^= uint64(t[i])
		h *= 1099511628211
	}
	return h
}

// mix64 is the MurmurHash3 64-bit finalizer, a bijection that spreads every
// input bit over the whole word, so chaining it keeps prefix hashes of
// different token sequences apart.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
