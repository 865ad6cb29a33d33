package llm

import (
	"errors"
	"fmt"
	"testing"
)

func feed(t *testing.T, chunks ...string) (*assembler, []Delta) {
	t.Helper()
	a := newAssembler(Config{}.withDefaults().replyLimits())
	var deltas []Delta
	cb := Callbacks{OnDelta: func(d Delta) { deltas = append(deltas, d) }}
	for _, c := range chunks {
		if err := a.add([]byte(c), cb, ""); err != nil {
			t.Fatalf("add(%s): %v", c, err)
		}
	}
	return a, deltas
}

func TestAssembleToolCallsByIndexOutOfOrder(t *testing.T) {
	a, _ := feed(t,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"second","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"first","arguments":"{\"x\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"first","arguments":":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	)
	r := a.response()
	want := `[{a first {"x":1}} {b second {}}]`
	if got := fmt.Sprint(r.ToolCalls); got != want {
		t.Errorf("ToolCalls = %s, want %s", got, want)
	}
	if r.FinishReason != "tool_calls" || !a.shown {
		t.Errorf("finish %q shown %v", r.FinishReason, a.shown)
	}
}

func TestAssembleToolCallsWithoutIndex(t *testing.T) {
	a, _ := feed(t,
		`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{\"p\":"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"two","arguments":{"q":2}}}]}}]}`,
	)
	want := `[{a one {"p":1}} {b two {"q":2}}]`
	if got := fmt.Sprint(a.response().ToolCalls); got != want {
		t.Errorf("ToolCalls = %s, want %s", got, want)
	}
}

func TestAssembleMalformedArgumentsKeptVerbatim(t *testing.T) {
	a, _ := feed(t, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{not json"}}]}}]}`)
	if got := a.response().ToolCalls[0].Arguments; got != "{not json" {
		t.Errorf("Arguments = %q", got)
	}
}

func TestAssembleReasoningFieldsAndDeltas(t *testing.T) {
	a, deltas := feed(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"more"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"answer"}}]}`,
		`{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}],"usage":null}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}`,
	)
	r := a.response()
	if r.Reasoning != "think more" || r.Content != "answer" || r.FinishReason != "stop" {
		t.Errorf("response = %+v", r)
	}
	if fmt.Sprint(deltas) != "[{ think } { more} {answer }]" {
		t.Errorf("deltas = %v", deltas)
	}
	if !r.HasUsage || r.Usage.PromptTokens != 10 || r.Usage.CacheReported {
		t.Errorf("usage = %+v", r.Usage)
	}
}

func TestAssembleErrorsOnBadChunks(t *testing.T) {
	a := newAssembler(Config{}.withDefaults().replyLimits())
	if err := a.add([]byte(`{"choices":`), Callbacks{}, ""); err == nil {
		t.Errorf("malformed chunk accepted")
	}
	err := a.add([]byte(`{"error":{"message":"boom key-123","type":"server_error"}}`), Callbacks{}, "key-123")
	var api *APIError
	if !errors.As(err, &api) || api.Message != "boom [redacted]" {
		t.Errorf("err = %v", err)
	}
}
