package llm

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func TestJoinUserRuns(t *testing.T) {
	in := []openai.ChatCompletionMessage{
		{Role: "system", Content: "s"},
		{Role: "user", Content: "a"},
		{Role: "user", Content: "b"},
		{Role: "assistant", Content: "c"},
		{Role: "tool", Content: "t", ToolCallID: "1"},
		{Role: "user", Content: "d"},
		{Role: "user", Content: "e"},
		{Role: "user", Content: "f"},
	}
	out := JoinUserRuns(in)
	if len(out) != 5 || out[1].Content != "a\n\nb" || out[4].Content != "d\n\ne\n\nf" || out[0].Content != "s" {
		t.Errorf("JoinUserRuns = %+v", out)
	}
	if in[1].Content != "a" {
		t.Error("the input was modified")
	}
}
