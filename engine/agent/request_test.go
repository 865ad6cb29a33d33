package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/purge"
	"github.com/tally-dev/tally/engine/transcript"
)

// pipelineScript plays a model that, every turn, reads big.txt twice (the
// second result is identical and over DedupeMin, so it goes out as a
// <TOOL_RESULT_REF>), reads a.txt and answers. It answers a purge with the
// removal of message 3 and a summary request with a summary.
func pipelineScript() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if len(req.Tools) == 1 && req.Tools[0] == purge.ToolName {
			return llmtest.Call(purge.ToolName, `{"op":"remove","msg":3}`)
		}
		if strings.Contains(req.LastUser(), strings.TrimSpace(compact.SummaryInstruction)) {
			return llmtest.Text("Summary: big.txt and a.txt were read; nothing was changed.")
		}
		switch req.ToolResultsSinceHuman() {
		case 0, 1:
			return llmtest.Call("read_file", `{"path":"big.txt"}`)
		case 2:
			return llmtest.Call("read_file", `{"path":"a.txt"}`)
		}
		return llmtest.Text("Both files are as expected.")
	})
}

// pipelineHarness is a harness whose workspace holds big.txt.
func pipelineHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, pipelineScript(), nil)
	var b strings.Builder
	for i := 0; b.Len() < 3*DedupeMin; i++ {
		b.WriteString("line of the big file that every turn reads twice\n")
	}
	if err := os.WriteFile(filepath.Join(h.ws, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// scripted records which of the server's requests were turn requests and
// where a recorded rebuild fell between two of them.
type scripted struct {
	t      *testing.T
	h      *harness
	s      *Session
	turns  []int        // server request indices made by Run
	breaks map[int]bool // k: a rebuild came between turns[k-1] and turns[k]
}

func (p *scripted) run(text string) {
	p.t.Helper()
	from := len(p.h.srv.Requests())
	if _, err := p.s.Run(context.Background(), text); err != nil {
		p.t.Fatalf("turn %q: %v", text, err)
	}
	for i := from; i < len(p.h.srv.Requests()); i++ {
		p.turns = append(p.turns, i)
	}
}

// rebuilt marks that a rebuild happened after the turns so far.
func (p *scripted) rebuilt() {
	if p.breaks == nil {
		p.breaks = map[int]bool{}
	}
	p.breaks[len(p.turns)] = true
}

// wireRequest is the raw JSON of a request's messages and tools.
type wireRequest struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
}

func parseWire(t *testing.T, i int, body []byte) wireRequest {
	t.Helper()
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("request %d body is not JSON: %v", i, err)
	}
	return w
}

// jsonText is s as it appears inside a JSON string: encoded, unquoted.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// withoutStatus returns request r's raw messages without its tail slot:
// the status block at its end, either a message of its own or joined to a
// user message by llm.UserJoin. Anything else at the tail fails the test.
// joined reports which form it was.
func withoutStatus(t *testing.T, i int, r llmtest.Recorded) (msgs []json.RawMessage, joined bool) {
	t.Helper()
	raw := parseWire(t, i, r.Body).Messages
	n := len(raw)
	last := r.Messages[len(r.Messages)-1]
	at := strings.LastIndex(last.Content, "<agent_status")
	if last.Role != "user" || at < 0 || !strings.HasSuffix(last.Content, "</agent_status>") {
		t.Fatalf("request %d does not end with its status block: %.100q", i, last.Content)
	}
	status := jsonText(last.Content[at:])
	if at == 0 {
		if want := `{"role":"user","content":"` + status + `"}`; string(raw[n-1]) != want {
			t.Fatalf("request %d: the status message is\n%s\nwant\n%s", i, raw[n-1], want)
		}
		return raw[:n-1], false
	}
	suffix := jsonText(llm.UserJoin) + status + `"}`
	if !strings.HasSuffix(last.Content[:at], llm.UserJoin) || !bytes.HasSuffix(raw[n-1], []byte(suffix)) {
		t.Fatalf("request %d: the status is not joined at the end of the last message:\n%s", i, raw[n-1])
	}
	user := append(bytes.Clone(raw[n-1][:len(raw[n-1])-len(suffix)]), `"}`...)
	return append(raw[:n-1:n-1], user), true
}

// growsFrom reports whether next begins with prev's messages without its
// status, byte for byte, followed by prev's reply. It returns where they
// first differ otherwise.
func growsFrom(t *testing.T, reqs []llmtest.Recorded, prev, next int) (bool, string) {
	t.Helper()
	base, _ := withoutStatus(t, prev, reqs[prev])
	w := parseWire(t, next, reqs[next].Body)
	if string(w.Tools) != string(parseWire(t, prev, reqs[prev].Body).Tools) {
		return false, "the tool catalog changed"
	}
	if len(w.Messages) <= len(base) {
		return false, "it has no more messages than the one before"
	}
	for j := range base {
		if !bytes.Equal(base[j], w.Messages[j]) {
			return false, fmt.Sprintf("message %d differs:\n%s\n%s", j, base[j], w.Messages[j])
		}
	}
	reply, got := reqs[prev].Reply, reqs[next].Messages[len(base)]
	if reply == nil || got.Role != "assistant" {
		return false, "the message after the previous request is not its reply"
	}
	if len(reply.ToolCalls) != len(got.ToolCalls) || len(reply.ToolCalls) == 0 && got.Content != reply.Content {
		return false, "the reply differs from what the model answered"
	}
	for k := range reply.ToolCalls {
		if got.ToolCalls[k].Name != reply.ToolCalls[k].Name || got.ToolCalls[k].Arguments != reply.ToolCalls[k].Arguments {
			return false, "a tool call of the reply differs from what the model answered"
		}
	}
	return true, ""
}

// checkAppendOnly asserts the request invariant over p's turn requests:
// each begins with the previous one without its status, plus its reply,
// byte for byte, except exactly where a recorded rebuild came between.
func checkAppendOnly(t *testing.T, p *scripted) {
	t.Helper()
	p.h.noInvalid()
	reqs := p.h.srv.Requests()
	var folded, refs, joined, alone bool
	for k, i := range p.turns {
		for _, m := range reqs[i].Messages {
			folded = folded || strings.Contains(m.Content, transcript.TurnMetaUnchanged)
			refs = refs || strings.HasPrefix(m.Content, "<TOOL_RESULT_REF ")
		}
		if _, j := withoutStatus(t, i, reqs[i]); j {
			joined = true
		} else {
			alone = true
		}
		if k == 0 {
			continue
		}
		ok, why := growsFrom(t, reqs, p.turns[k-1], i)
		switch {
		case p.breaks[k] && ok:
			t.Errorf("request %d is unchanged across the rebuild before it; the rebuild was not exercised", i)
		case !p.breaks[k] && !ok:
			t.Errorf("request %d does not begin with request %d plus its reply: %s", i, p.turns[k-1], why)
		}
	}
	if !folded || !refs || !joined || !alone {
		t.Fatalf("the session did not exercise every step: turn_meta folded %v, tool result references %v, status joined %v, status alone %v",
			folded, refs, joined, alone)
	}
}

func TestRequestsGrowByAppendingOnly(t *testing.T) {
	h := pipelineHarness(t)
	p := &scripted{t: t, h: h, s: h.session("grow")}
	for _, text := range []string{"check the notes", "check them again", "and once more"} {
		p.run(text)
	}
	if len(p.turns) != 12 {
		t.Fatalf("%d turn requests; want 12", len(p.turns))
	}
	checkAppendOnly(t, p)
}

func TestRequestsGrowByAppendingOnlyBetweenRebuilds(t *testing.T) {
	h := pipelineHarness(t)
	p := &scripted{t: t, h: h, s: h.session("rebuilds")}
	ctx := context.Background()
	p.run("check the notes")
	p.run("check them again")
	pp, err := p.s.Purge().Preview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.s.Purge().Apply(pp); err != nil {
		t.Fatal(err)
	}
	p.rebuilt()
	p.run("and once more")
	if _, err := p.s.Compaction().Apply(ctx); err != nil {
		t.Fatal(err)
	}
	p.rebuilt()
	p.run("one last time")
	if n := len(h.rec.kinds(EventRebuild)); n != 2 {
		t.Fatalf("%d rebuilds; want the purge and the compaction", n)
	}
	checkAppendOnly(t, p)
}

// withoutUsage drops the usage a model reports, so the session's level is
// its own count alone.
func withoutUsage(m llm.Model) llm.Model {
	return llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		resp, err := m.Stream(ctx, req, cb)
		if resp != nil {
			resp.HasUsage, resp.Usage = false, llm.Usage{}
		}
		return resp, err
	})
}

// TestGaugeCompactionAndPurgeCountAlike checks that the context gauge, the
// compaction preview and the purge preview count the same session with the
// same numbers, message by message, also after reopening it.
func TestGaugeCompactionAndPurgeCountAlike(t *testing.T) {
	h := pipelineHarness(t)
	h.cfg.Model = withoutUsage(h.cfg.Model)
	s := h.session("agree")
	ctx := context.Background()
	for _, text := range []string{"check the notes", "check them again", "and once more"} {
		if _, err := s.Run(ctx, text); err != nil {
			t.Fatal(err)
		}
	}
	v := s.Snapshot()
	level, exact := v.Level, v.Exact
	if exact || level != s.prefixTok+s.log.Tokens() {
		t.Fatalf("gauge = %d (exact %v); want the unanchored %d", level, exact, s.prefixTok+s.log.Tokens())
	}
	plan, err := s.Compaction().Preview()
	if err != nil {
		t.Fatal(err)
	}
	if plan.TokensBefore != level {
		t.Errorf("the compaction preview starts from %d tokens; the gauge shows %d", plan.TokensBefore, level)
	}
	pp, err := s.Purge().Preview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pp.Before+s.prefixTok != level {
		t.Errorf("the purge preview counts %d history tokens; the gauge shows %d with a %d-token prefix", pp.Before, level, s.prefixTok)
	}
	if len(plan.Tokens) != s.log.Len() || len(pp.Changes) == 0 {
		t.Fatalf("the compaction plan counts %d messages of %d; the purge changes %d", len(plan.Tokens), s.log.Len(), len(pp.Changes))
	}
	// What the preview says each message weighs before it acts: its first
	// change's TokensBefore, or its count in the plan when none touches it.
	planned := append([]int(nil), plan.Tokens...)
	seen := map[int]bool{}
	for _, l := range plan.Layers {
		for _, c := range l.Changes {
			if !seen[c.Index] && c.Index < len(planned) {
				seen[c.Index], planned[c.Index] = true, c.TokensBefore
			}
		}
	}
	msgs := s.Snapshot().Messages()
	for i := range s.log.Len() {
		if e := s.log.At(i); planned[i] != e.Tokens || msgs[i].Tokens != e.Tokens || transcript.TokensOf(msgs[i]) != e.Tokens {
			t.Errorf("message %d: the log counts %d, the compaction preview %d, the message carries %d", i, e.Tokens, planned[i], msgs[i].Tokens)
		}
	}
	for _, c := range pp.Changes {
		if c.Before != s.log.At(c.Msg-1).Tokens {
			t.Errorf("the purge counts message %d as %d tokens; the log as %d", c.Msg, c.Before, s.log.At(c.Msg-1).Tokens)
		}
	}
	again, err := Open(h.cfg, "agree")
	if err != nil {
		t.Fatal(err)
	}
	if l := again.Snapshot().Level; l != level {
		t.Errorf("reopened, the gauge shows %d; it showed %d", l, level)
	}
}
