package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// toks returns n distinct tokens named after prefix.
func toks(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(" %s%d", prefix, i)
	}
	return out
}

func cat(parts ...[]string) []string { return slices.Concat(parts...) }

func hashesOf(ts []string) []uint64 { return extendHashes(make([]uint64, 1, len(ts)+1), ts) }

// unitSim drives the unit rule of a server without HTTP: serve feeds it a
// request's input and output tokens and returns the hit and ideal.
type unitSim struct{ s *Server }

func newUnitSim(interval int) *unitSim {
	return &unitSim{&Server{cfg: config{cacheRule: CacheUnits, unitInterval: interval}}}
}

func (u *unitSim) serve(model string, in, out []string) (hit, ideal int) {
	return u.s.serveUnits(model, &unitRequest{in: hashesOf(in), out: hashesOf(cat(in, out))})
}

// The two examples of DeepSeek's context-caching guide, with A shorter
// than the unit interval so no interval unit fits inside it.
func TestUnitRuleGuideExamples(t *testing.T) {
	a, b, c, d := toks("a", 100), toks("b", 50), toks("c", 30), toks("d", 20)
	out := toks("o", 10)

	t.Run("A+B then A+B+C hits A+B", func(t *testing.T) {
		u := newUnitSim(DefaultUnitInterval)
		u.serve("m", cat(a, b), out)
		if hit, _ := u.serve("m", cat(a, b, c), out); hit != len(a)+len(b) {
			t.Errorf("hit %d, want the whole first input %d", hit, len(a)+len(b))
		}
	})
	t.Run("A+B then A+B+output+C hits the output unit", func(t *testing.T) {
		u := newUnitSim(DefaultUnitInterval)
		u.serve("m", cat(a, b), out)
		hit, ideal := u.serve("m", cat(a, b, out, c), out)
		if want := len(a) + len(b) + len(out); hit != want || ideal != want {
			t.Errorf("hit %d ideal %d, want both %d (input+output)", hit, ideal, want)
		}
	})
	t.Run("A+B, A+C misses, then A+D hits A", func(t *testing.T) {
		u := newUnitSim(DefaultUnitInterval)
		if hit, ideal := u.serve("m", cat(a, b), out); hit != 0 || ideal != 0 {
			t.Errorf("first request: hit %d ideal %d, want 0", hit, ideal)
		}
		if hit, _ := u.serve("m", cat(a, c), out); hit != 0 {
			t.Errorf("A+C: hit %d, want 0 (A is not persisted until A+C is seen)", hit)
		}
		if hit, _ := u.serve("m", cat(a, d), out); hit != len(a) {
			t.Errorf("A+D: hit %d, want %d (the common prefix unit A)", hit, len(a))
		}
	})
}

func TestUnitRuleHitsOnlyWholeUnits(t *testing.T) {
	a, b := toks("a", 100), toks("b", 50)
	u := newUnitSim(DefaultUnitInterval)
	u.serve("m", cat(a, b), toks("o", 10))
	// Shares 149 tokens with the only unit of length 150 (and 160), yet
	// hits nothing: there is no partial or block-rounded hit.
	if hit, _ := u.serve("m", cat(a, b[:49], toks("x", 5)), nil); hit != 0 {
		t.Errorf("hit %d inside a unit, want 0", hit)
	}
	// Sending exactly the first input again hits all of it.
	if hit, _ := u.serve("m", cat(a, b), nil); hit != len(a)+len(b) {
		t.Errorf("repeat: hit %d, want %d", hit, len(a)+len(b))
	}
}

func TestUnitRuleIntervalUnits(t *testing.T) {
	a, b, c := toks("a", 40), toks("b", 30), toks("c", 30)
	for _, tc := range []struct {
		interval, want int
	}{{16, 32}, {40, 40}, {64, 0}, {0, 0}} {
		u := newUnitSim(tc.interval)
		u.serve("m", cat(a, b), nil)
		if hit, _ := u.serve("m", cat(a, c), nil); hit != tc.want {
			t.Errorf("interval %d: hit %d, want %d", tc.interval, hit, tc.want)
		}
	}
	// Interval units inside the output count too: the second request
	// shares the 40 input and 20 of the 30 output tokens, so it hits the
	// interval unit at 50 inside the first input+output, not just the
	// whole-input unit at 40.
	u := newUnitSim(50)
	u.serve("m", a, toks("o", 30))
	if hit, _ := u.serve("m", cat(a, toks("o", 20), c), nil); hit != 50 {
		t.Errorf("interval unit inside the output: hit %d, want 50", hit)
	}
}

func TestUnitRulePerModelAndReset(t *testing.T) {
	a := toks("a", 100)
	u := newUnitSim(DefaultUnitInterval)
	u.serve("x", a, toks("o", 5))
	if hit, ideal := u.serve("y", a, nil); hit != 0 || ideal != 0 {
		t.Errorf("other model: hit %d ideal %d, want 0 (units are per model)", hit, ideal)
	}
	u.s.MarkReset()
	hit, ideal := u.serve("x", a, nil)
	if hit != len(a) || ideal != 0 {
		t.Errorf("after MarkReset: hit %d ideal %d, want %d and 0", hit, ideal, len(a))
	}
	u.s.resetNext = false // what account does after serving
	if _, ideal := u.serve("x", a, nil); ideal != len(a) {
		t.Errorf("ideal %d, want the previous input+output %d", ideal, len(a))
	}
}

func TestUnitRequestSharesInputHashes(t *testing.T) {
	for _, name := range []string{TemplateQwen35, TemplateDeepSeekV4, TemplatePlain} {
		p := mustParse(t, toolConversation)
		rd := render(name, p)
		in := Tokenize(rd.text)
		for _, reply := range []Reply{
			{Reasoning: "think hard", Content: "done", ToolCalls: []ToolCall{{ID: "c2", Name: "ls", Arguments: `{"path":"x"}`}}},
			{Content: "plain words"},
			{Content: "x", ToolCalls: []ToolCall{{ID: "c3", Name: "ls", Arguments: "not json"}}},
		} {
			r := newUnitRequest(p, rd, in, reply)
			text := inputOutputText(p, rd, reply)
			if !slices.Equal(r.in, hashesOf(in)) || !slices.Equal(r.out, hashesOf(Tokenize(text))) {
				t.Errorf("%s %+v: hashes differ from hashing the full token sequences", name, reply)
			}
			if !strings.HasPrefix(text, rd.text) || len(r.out) <= len(r.in) {
				t.Errorf("%s %+v: input+output %q does not extend the input", name, reply, text)
			}
		}
	}
}

func TestInputOutputFallbackApproximation(t *testing.T) {
	p := mustParse(t, toolConversation)
	rd := render(TemplateQwen35, p)
	// The Qwen template cannot iterate arguments that are not a JSON
	// object, so the reply is appended as plain text.
	got := inputOutputText(p, rd, Reply{Reasoning: "r", Content: "c", ToolCalls: []ToolCall{{ID: "c2", Name: "ls", Arguments: "not json"}}})
	if want := rd.text + "rclsnot json"; got != want {
		t.Errorf("fallback = %q, want the input followed by the reply text", got[len(rd.text):])
	}
}

// usageOf decodes the usage of a non-streamed answer.
func usageOf(t *testing.T, b []byte) (hit, miss, cached int) {
	t.Helper()
	var r struct {
		Usage struct {
			Hit     int `json:"prompt_cache_hit_tokens"`
			Miss    int `json:"prompt_cache_miss_tokens"`
			Details struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	return r.Usage.Hit, r.Usage.Miss, r.Usage.Details.Cached
}

func TestCacheUnitsOverHTTP(t *testing.T) {
	srv := New(ScriptFunc(func(r *Req) Reply { return Text("Paris is the capital.") }),
		WithTemplate(TemplatePlain), WithCacheRule(CacheUnits))
	defer srv.Close()
	sys := msg("system", systemPrompt)
	send := func(msgs ...map[string]any) (hit, miss, cached int) {
		t.Helper()
		status, _, b := post(t, srv, chat(msgs...))
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, b)
		}
		return usageOf(t, b)
	}
	send(sys, msg("user", "Bonjour, what is the capital of France?"))
	hit, _, cached := send(sys, msg("user", "Quick question: the capital of Spain?"))
	if hit != 0 || cached != 0 {
		t.Errorf("A+C: hit %d cached %d, want 0", hit, cached)
	}
	hit, miss, cached := send(sys, msg("user", "Zut, and the capital of Italy?"))
	recs := srv.Requests()
	shared := commonPrefix(Tokenize(recs[0].Rendered), Tokenize(recs[1].Rendered))
	if shared == 0 || hit != shared || cached != shared || hit+miss != recs[2].Prompt {
		t.Errorf("A+D: hit %d cached %d miss %d, want the common prefix %d of the first two (prompt %d)", hit, cached, miss, shared, recs[2].Prompt)
	}

	// Appending the reply verbatim hits the first request's input+output
	// unit, which is what the ideal expects.
	first := []map[string]any{sys, msg("user", "Bonjour, what is the capital of France?")}
	hit, _, _ = send(append(first, msg("assistant", "Paris is the capital."), msg("user", "Thanks!"))...)
	r := srv.Requests()[3]
	io := CountTokens(r.Rendered[:strings.LastIndex(r.Rendered, "<|user|>")])
	prevIO := CountTokens(recs[2].Rendered + "Paris is the capital.\n<|end|>\n")
	if hit != io || r.Ideal != prevIO {
		t.Errorf("appended reply: hit %d, want input+output %d; ideal %d, want the previous request's input+output %d", hit, io, r.Ideal, prevIO)
	}
	// Editing the reply leaves only the whole-input unit of request 0.
	hit, _, _ = send(append(first, msg("assistant", "Paris, of course."), msg("user", "Thanks!"))...)
	if hit != recs[0].Prompt {
		t.Errorf("edited reply: hit %d, want the first input %d", hit, recs[0].Prompt)
	}
}

// An append-only agent that sends every reply back verbatim (reasoning,
// tool calls) followed by the tool results hits the whole previous
// input+output unit on every request, with every template.
func TestCacheUnitsAppendOnlyAgentHitsIdeal(t *testing.T) {
	for _, name := range []string{TemplateQwen35, TemplateDeepSeekV4, TemplatePlain} {
		t.Run(name, func(t *testing.T) {
			srv := New(ScriptFunc(func(r *Req) Reply {
				return Reply{Reasoning: fmt.Sprintf("step %d: look around", r.Step), ToolCalls: []ToolCall{{Name: "shell", Arguments: `{"cmd":"ls -la"}`}}}
			}), WithTemplate(name), WithCacheRule(CacheUnits), WithUnitInterval(256))
			defer srv.Close()
			msgs := []map[string]any{msg("system", systemPrompt), msg("user", "Find the bug.")}
			for range 6 {
				status, _, b := post(t, srv, body("m", msgs))
				if status != http.StatusOK {
					t.Fatalf("status %d: %s", status, b)
				}
				var r struct {
					Choices []struct {
						Message map[string]any `json:"message"`
					} `json:"choices"`
				}
				if err := json.Unmarshal(b, &r); err != nil || len(r.Choices) != 1 {
					t.Fatalf("answer %s: %v", b, err)
				}
				m := r.Choices[0].Message
				msgs = append(msgs, m)
				for _, c := range m["tool_calls"].([]any) {
					id := c.(map[string]any)["id"].(string)
					msgs = append(msgs, toolMsg(id, "main.go\n"+strings.Repeat("file.go\n", 40)))
				}
			}
			recs := srv.Requests()
			for i, r := range recs {
				if r.FellBack {
					t.Fatalf("request %d fell back: %s", i, r.RenderError)
				}
				if i == 0 {
					if r.Hit != 0 || r.Ideal != 0 {
						t.Errorf("first request: hit %d ideal %d", r.Hit, r.Ideal)
					}
					continue
				}
				if r.Hit != r.Ideal || r.Hit <= recs[i-1].Prompt || r.Hit >= r.Prompt {
					t.Errorf("request %d: hit %d ideal %d, want equal and between the previous prompt %d and this prompt %d",
						i, r.Hit, r.Ideal, recs[i-1].Prompt, r.Prompt)
				}
			}
		})
	}
}

func TestCacheRuleDefaultAndUnknown(t *testing.T) {
	if CacheLCP.String() != "CacheLCP" || CacheUnits.String() != "CacheUnits" || CacheRule(7).String() != "CacheRule(7)" {
		t.Errorf("String: %v %v %v", CacheLCP, CacheUnits, CacheRule(7))
	}
	srv := New(nil, WithCacheRule(CacheRule(7)))
	defer srv.Close()
	status, _, b := post(t, srv, chat(msg("user", "hi")))
	if status != http.StatusInternalServerError || !strings.Contains(errorMessage(t, b), "CacheRule(7)") {
		t.Errorf("unknown rule: %d %s", status, b)
	}
	// The default stays the block-rounded longest common prefix: A+C hits
	// the shared system prompt, which the unit rule would not.
	def := New(nil, WithTemplate(TemplatePlain))
	defer def.Close()
	post(t, def, chat(msg("system", systemPrompt), msg("user", "Bonjour")))
	post(t, def, chat(msg("system", systemPrompt), msg("user", "Quick")))
	if r := def.Requests()[1]; r.Hit == 0 || r.Hit%64 != 0 {
		t.Errorf("default rule: hit %d, want a positive multiple of 64", r.Hit)
	}
}

// unitSession fills a unit cache with an append-only session of requests
// that grow to about total tokens, and returns the prefix hashes of a next
// request that appends to the last one.
func unitSession(requests, total int) (*Server, []uint64) {
	all := toks("t", total+total/requests)
	sim := newUnitSim(DefaultUnitInterval)
	step := total / requests
	var h []uint64
	for i := 1; i <= requests; i++ {
		// The replies are never sent back, so every request adds input,
		// input+output and interval units the next ones only partly hit.
		in := all[:i*step]
		out := toks(fmt.Sprintf("o%d_", i), step/4)
		h = hashesOf(cat(in, out))
		sim.s.serveUnits("m", &unitRequest{in: hashesOf(in), out: h})
	}
	return sim.s, h
}

// BenchmarkUnitLookup measures one CacheUnits lookup against a session of
// 300 requests growing to 120K tokens, for a request that hits the last
// unit and for one that misses every unit.
func BenchmarkUnitLookup(b *testing.B) {
	srv, next := unitSession(300, 120_000)
	c := srv.units["m"]
	miss := hashesOf(toks("z", 120_000))
	b.Logf("%d units at %d distinct lengths", len(c.units), len(c.lengths))
	b.Run("hit", func(b *testing.B) {
		for b.Loop() {
			if c.lookup(next) == 0 {
				b.Fatal("no hit")
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		for b.Loop() {
			if c.lookup(miss) != 0 {
				b.Fatal("unexpected hit")
			}
		}
	})
}

// BenchmarkUnitServe measures the whole per-request cost of CacheUnits on
// a 120K-token prompt: hashing, lookup and persisting.
func BenchmarkUnitServe(b *testing.B) {
	srv, _ := unitSession(300, 120_000)
	in := toks("t", 120_000)
	out := toks("reply", 500)
	for b.Loop() {
		h := hashesOf(in)
		srv.serveUnits("m", &unitRequest{in: h, out: extendHashes(slices.Clip(h), out)})
	}
}
