package llmtest

import (
	"encoding/json"
	"strings"
	"testing"
)

var systemPrompt = strings.Repeat("You are a careful coding agent working in a Go repository. ", 20)

var toolsJSON = []any{map[string]any{"type": "function", "function": map[string]any{
	"name": "shell", "description": "Run a shell command",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}},
}}}

func body(model string, msgs []map[string]any) string {
	b, _ := json.Marshal(map[string]any{"model": model, "messages": msgs, "tools": toolsJSON})
	return string(b)
}

func TestCacheHitsGrowWithAppendingConversation(t *testing.T) {
	srv := New(ScriptFunc(func(r *Req) Reply {
		return Reply{Reasoning: "ok", Content: "Answer number " + strings.Repeat("word ", 30)}
	}))
	defer srv.Close()
	msgs := []map[string]any{msg("system", systemPrompt)}
	for turn := range 5 {
		msgs = append(msgs, msg("user", "Question "+strings.Repeat("detail ", 20*(turn+1))))
		status, _, b := post(t, srv, body("m", msgs))
		if status != 200 {
			t.Fatalf("turn %d: %d %s", turn, status, b)
		}
		var r struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(b, &r)
		msgs = append(msgs, msg("assistant", r.Choices[0].Message.Content))
	}
	recs := srv.Requests()
	if recs[0].Hit != 0 || recs[0].Ideal != 0 {
		t.Errorf("first request hit %d ideal %d, want 0", recs[0].Hit, recs[0].Ideal)
	}
	for i, r := range recs {
		if r.Hit%64 != 0 || r.Hit > r.Prompt || r.Hit+r.Miss != r.Prompt {
			t.Errorf("request %d: hit %d miss %d prompt %d", i, r.Hit, r.Miss, r.Prompt)
		}
		if r.Prompt != CountTokens(r.Rendered) || r.FellBack {
			t.Errorf("request %d: prompt %d for %d rendered tokens (fell back %v)", i, r.Prompt, CountTokens(r.Rendered), r.FellBack)
		}
		if i == 0 {
			continue
		}
		prev := recs[i-1]
		if r.Hit <= prev.Hit {
			t.Errorf("request %d: hit %d did not grow from %d", i, r.Hit, prev.Hit)
		}
		if r.Ideal != prev.Prompt-prev.Prompt%64 {
			t.Errorf("request %d: ideal %d, want floor64(%d)", i, r.Ideal, prev.Prompt)
		}
		// An append-only client loses at most the generation prompt's
		// last few tokens, which can cost one cache unit.
		if r.Hit < r.Ideal-64 {
			t.Errorf("request %d: hit %d far below ideal %d", i, r.Hit, r.Ideal)
		}
	}
	st := srv.Stats()
	if st.Hit == 0 || st.Hit > st.Ideal || st.Prompt != st.Hit+st.Miss {
		t.Errorf("stats = %+v", st)
	}
}

func TestCacheHitDropsWhenEarlyByteChanges(t *testing.T) {
	srv := New(nil, WithTemplate(TemplatePlain))
	defer srv.Close()
	conv := func(sys string) string {
		return body("m", []map[string]any{msg("system", sys), msg("user", "hello")})
	}
	post(t, srv, conv(systemPrompt))
	post(t, srv, conv(systemPrompt))
	post(t, srv, conv("X"+systemPrompt[1:]))
	recs := srv.Requests()
	if recs[1].Hit != recs[1].Prompt-recs[1].Prompt%64 || recs[1].Hit == 0 {
		t.Errorf("identical request: hit %d of %d", recs[1].Hit, recs[1].Prompt)
	}
	// The plain rendering puts the tools first; the cache can keep only
	// the whole units before the changed byte.
	prefix := CountTokens(recs[2].Rendered[:strings.Index(recs[2].Rendered, "Xou")])
	if recs[2].Hit != prefix-prefix%64 || recs[2].Hit >= recs[1].Hit {
		t.Errorf("changed request: hit %d, want floor64(%d) below %d", recs[2].Hit, prefix, recs[1].Hit)
	}
}

func TestCachePerModelResetAndUnit(t *testing.T) {
	srv := New(nil, WithCacheUnit(1))
	defer srv.Close()
	conv := body("a", []map[string]any{msg("system", systemPrompt), msg("user", "hello")})
	post(t, srv, conv)
	post(t, srv, body("b", []map[string]any{msg("system", systemPrompt), msg("user", "hello")}))
	srv.MarkReset()
	post(t, srv, conv)
	post(t, srv, conv)
	recs := srv.Requests()
	if recs[1].Hit != 0 || recs[1].Ideal != 0 {
		t.Errorf("other model: hit %d ideal %d, want 0 (cache is per model)", recs[1].Hit, recs[1].Ideal)
	}
	if recs[2].Hit != recs[2].Prompt || recs[2].Ideal != 0 {
		t.Errorf("after MarkReset: hit %d of %d, ideal %d (want full hit, ideal 0)", recs[2].Hit, recs[2].Prompt, recs[2].Ideal)
	}
	if recs[3].Ideal != recs[2].Prompt {
		t.Errorf("unit 1: ideal %d, want %d", recs[3].Ideal, recs[2].Prompt)
	}
}

func TestPromptTokensOverride(t *testing.T) {
	srv := New(Sequence(Text("x"), Reply{Content: "x", PromptTokens: 10}))
	defer srv.Close()
	conv := chat(msg("system", systemPrompt), msg("user", "hi"))
	post(t, srv, conv)
	post(t, srv, conv)
	r := srv.Requests()[1]
	if r.Prompt != 10 || r.Hit != 10 || r.Miss != 0 {
		t.Errorf("override: prompt %d hit %d miss %d", r.Prompt, r.Hit, r.Miss)
	}
}

func TestTokenize(t *testing.T) {
	for _, s := range []string{"", "hello world", "func main() {\n\tfmt.Println(\"héllo, 世界\")\n}", "averyveryverylongidentifier_name42", "   \n\t x"} {
		toks := Tokenize(s)
		if strings.Join(toks, "") != s {
			t.Errorf("%q: tokens do not concatenate back: %q", s, toks)
		}
		for _, tok := range toks {
			if tok == "" {
				t.Errorf("%q: empty token", s)
			}
		}
		for _, suffix := range []string{"a", " ", "xyz def", "!"} {
			longer := Tokenize(s + suffix)
			if len(toks) > 0 && commonPrefix(toks, longer) < len(toks)-1 {
				t.Errorf("%q + %q changed more than the last token", s, suffix)
			}
		}
	}
	if got := strings.Join(Tokenize("abcdefghij x"), "|"); got != "abcdef|ghij| x" {
		t.Errorf("Tokenize = %s", got)
	}
	if CountTokens("a, b") != 3 {
		t.Errorf("CountTokens(%q) = %d", "a, b", CountTokens("a, b"))
	}
}
