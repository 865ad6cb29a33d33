package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestChainFallsOverWhenTheEndpointFailsForGood: the first endpoint
// answers HTTP 500 to every attempt; the request goes on to the second,
// with the second's model and key only, the switch is announced and named
// on the answer, and the next request starts on the second at once.
func TestChainFallsOverWhenTheEndpointFailsForGood(t *testing.T) {
	down := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Reply{Fault: llmtest.Fault500} }),
		llmtest.WithAPIKey("sk-first"))
	defer down.Close()
	up := llmtest.New(llmtest.Sequence(llmtest.Text("from the second"), llmtest.Text("again")),
		llmtest.WithAPIKey("sk-second"), llmtest.WithModels([]string{"backup-model"}))
	defer up.Close()
	rec := &recorder{}
	first := newModel(down, rec, func(c *Config) { c.APIKey, c.MaxAttempts = "sk-first", 3 })
	second := newModel(up, rec, func(c *Config) { c.APIKey = "sk-second" })
	chain, err := NewChain(Link{Model: first, Label: "test-model"},
		Link{Model: second, Name: "backup-model", Label: "backup-model (backup)"})
	if err != nil {
		t.Fatal(err)
	}
	req := userRequest("hello")
	req.Session, req.CacheKey = "s1", "s1"
	resp, err := chain.Stream(context.Background(), req, rec.callbacks())
	if err != nil {
		t.Fatalf("the chain did not fall over: %v", err)
	}
	if resp.Content != "from the second" || resp.Model != "backup-model" ||
		!strings.HasPrefix(resp.Fallback, "test-model → backup-model (backup): server error (HTTP 500)") {
		t.Errorf("answer %q from %q, fallback %q", resp.Content, resp.Model, resp.Fallback)
	}
	if n := len(down.Requests()); n != 3 {
		t.Errorf("the first endpoint got %d requests, want its 3 attempts", n)
	}
	last := rec.retries[len(rec.retries)-1]
	if last.Fallback != "test-model → backup-model (backup)" {
		t.Errorf("the switch was not announced: %+v", rec.retries)
	}
	got := up.Requests()
	if len(got) != 1 || got[0].Status != 200 || got[0].Model != "backup-model" || strings.Contains(string(got[0].Body), "prompt_cache_key") {
		t.Fatalf("the second endpoint got %+v", got)
	}
	resp, err = chain.Stream(context.Background(), req, rec.callbacks())
	if err != nil || resp.Content != "again" || resp.Fallback != "" || resp.Model != "backup-model" {
		t.Errorf("the next request: %+v, %v", resp, err)
	}
	if n := len(down.Requests()); n != 3 {
		t.Errorf("the next request went back to the failed endpoint (%d requests)", n)
	}
	if chain.Active() != "backup-model (backup)" {
		t.Errorf("active link %q", chain.Active())
	}
}

// TestChainFallsOverFromAModelThatIsGone: a model the server no longer
// serves (HTTP 404) is a failure for good too.
func TestChainFallsOverFromAModelThatIsGone(t *testing.T) {
	old := llmtest.New(llmtest.Sequence(llmtest.Text("never")), llmtest.WithModels([]string{"other"}))
	defer old.Close()
	up := llmtest.New(llmtest.Sequence(llmtest.Text("ok")))
	defer up.Close()
	rec := &recorder{}
	chain, _ := NewChain(Link{Model: newModel(old, rec), Label: "test-model"}, Link{Model: newModel(up, rec), Name: "new-model", Label: "new-model"})
	resp, err := chain.Stream(context.Background(), userRequest("hi"), rec.callbacks())
	if err != nil || resp.Content != "ok" || !strings.Contains(resp.Fallback, "the model is not served") {
		t.Fatalf("%+v, %v", resp, err)
	}
}

// TestChainKeepsFailuresASwitchWouldNotCure: a rejected key, a prompt
// too long and the last link's own failure come back as they are.
func TestChainKeepsFailuresASwitchWouldNotCure(t *testing.T) {
	rec := &recorder{}
	for _, fault := range []llmtest.Fault{llmtest.FaultContextLength, llmtest.FaultDropAfterContent} {
		first := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "partial answer", Fault: fault}))
		second := llmtest.New(llmtest.Sequence(llmtest.Text("should not be asked")))
		chain, _ := NewChain(Link{Model: newModel(first, rec)}, Link{Model: newModel(second, rec), Name: "m2"})
		if _, err := chain.Stream(context.Background(), userRequest("hi"), rec.callbacks()); err == nil {
			t.Errorf("%s: no error", fault)
		}
		if n := len(second.Requests()); n != 0 {
			t.Errorf("%s: the fallback was asked", fault)
		}
		first.Close()
		second.Close()
	}
	if FailsForGood(&APIError{Status: 401}) || !FailsForGood(&APIError{Status: 503}) || !FailsForGood(&exhaustedError{attempts: 5, last: &APIError{Status: 429}}) {
		t.Error("FailsForGood classifies 401, 503 or an exhausted 429 wrongly")
	}
	if FailsForGood(context.Canceled) || FailsForGood(errors.New("anything")) {
		t.Error("FailsForGood takes a cancel or an unknown error")
	}
	if _, err := NewChain(Link{Model: Func(nil)}, Link{}, Link{}, Link{}, Link{}); err == nil {
		t.Error("a chain of four fallbacks was built")
	}
}
