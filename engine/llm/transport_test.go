package llm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestTransportRewritesOnlyTheTemperature sends the same request with and
// without temperature 0: the only difference on the wire is the injected
// "temperature":0, and the body without it is exactly what go-openai
// marshals, so the messages the engine assembled go out untouched.
func TestTransportRewritesOnlyTheTemperature(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec)
	req := userRequest("hi <b>&</b>")
	req.Messages = append(req.Messages,
		chat.Message{Role: chat.RoleAssistant, Content: "ok"},
		chat.Message{Role: chat.RoleUser, Content: "temperature: 0\n\"quoted\""})
	req.Tools = []chat.Tool{shellTool}
	zero := float32(0)
	for _, temp := range []*float32{nil, &zero} {
		req.Temperature = temp
		if _, err := m.Stream(context.Background(), req, Callbacks{}); err != nil {
			t.Fatalf("Stream: %v", err)
		}
	}
	got := srv.Requests()
	creq, _, err := req.chatRequest()
	if err != nil {
		t.Fatal(err)
	}
	creq.Stream = true
	creq.Messages, creq.Tools = goOpenAIMessages(req.Messages), goOpenAITools(req.Tools)
	b, err := json.Marshal(creq) // what go-openai's request builder does
	if err != nil {
		t.Fatal(err)
	}
	want := string(b)
	if string(got[0].Body) != want {
		t.Errorf("the body differs from go-openai's:\n%s\n%s", got[0].Body, want)
	}
	if string(got[1].Body) != `{"temperature":0,`+want[1:] {
		t.Errorf("with temperature 0 the body is not go-openai's plus the temperature:\n%s\n%s", got[1].Body, want)
	}
}
