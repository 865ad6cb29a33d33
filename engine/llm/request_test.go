package llm

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
)

func TestChatRequestValidation(t *testing.T) {
	msgs := []chat.Message{{Role: "user", Content: "x"}}
	for _, r := range []Request{
		{Messages: msgs},
		{Model: "m"},
		{Model: "m", Messages: msgs, MaxTokens: -1},
	} {
		if _, _, err := r.chatRequest(); err == nil || strings.HasPrefix(err.Error(), "llm: ") || !strings.Contains(err.Error(), "; ") {
			t.Errorf("%+v: err = %v", r, err)
		}
	}
	zero, half := float32(0), float32(0.5)
	if _, tz, _ := (Request{Model: "m", Messages: msgs, Temperature: &zero}).chatRequest(); !tz {
		t.Errorf("temperature 0 not flagged for injection")
	}
	req, tz, _ := (Request{Model: "m", Messages: msgs, Temperature: &half}).chatRequest()
	if tz || req.Temperature != 0.5 || !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage {
		t.Errorf("req = %+v, tz = %v", req, tz)
	}
}
