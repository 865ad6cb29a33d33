package llm

import (
	"testing"

	"github.com/tally-dev/tally/engine/chat"
)

func TestJoinUserRuns(t *testing.T) {
	in := []chat.Message{
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

func TestAppendJoinedChangesOnlyTheLastMessage(t *testing.T) {
	base := []chat.Message{
		{Role: "system", Content: "s"},
		{Role: "user", Content: "a"},
		{Role: "assistant", Content: "b"},
		{Role: "user", Content: "c"},
	}
	// A skeleton with spare capacity, as the agent keeps one: joining
	// writes the last message only, appending only past the end.
	skel := append(make([]chat.Message, 0, 8), base...)
	joined := AppendJoined(skel[:4:8], chat.Message{Role: "user", Content: "d"})
	if len(joined) != 4 || joined[3].Content != "c"+UserJoin+"d" {
		t.Fatalf("joined = %+v", joined)
	}
	for i := range 3 {
		if skel[i].Role != base[i].Role || skel[i].Content != base[i].Content {
			t.Errorf("message %d changed: %+v", i, skel[i])
		}
	}
	appended := AppendJoined(joined, chat.Message{Role: "assistant", Content: "e"})
	if len(appended) != 5 || appended[3].Content != "c"+UserJoin+"d" || appended[4].Content != "e" {
		t.Errorf("appended = %+v", appended)
	}
	if sys := AppendJoined([]chat.Message{{Role: "system", Content: "s"}}, chat.Message{Role: "user", Content: "u"}); len(sys) != 2 {
		t.Errorf("a user message was joined into the system prompt: %+v", sys)
	}
}
