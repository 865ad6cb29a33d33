package llm

import (
	"encoding/json"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func imagePart(url string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: url}}
}

func textPart(s string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: s}
}

// Joining a user message with images keeps every part in order, merges
// the text across the join, and writes neither message's parts.
func TestAppendJoinedMultiContent(t *testing.T) {
	withImage := openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{textPart("look"), imagePart("data:image/png;base64,AA==")}}
	before, _ := json.Marshal(withImage)

	// text, then a message with images: the texts merge.
	out := AppendJoined([]openai.ChatCompletionMessage{{Role: "user", Content: "a"}}, withImage)
	if len(out) != 1 || out[0].Content != "" || len(out[0].MultiContent) != 2 ||
		out[0].MultiContent[0].Text != "a"+UserJoin+"look" || out[0].MultiContent[1].ImageURL.URL != "data:image/png;base64,AA==" {
		t.Fatalf("text + images = %+v", out)
	}
	// images, then text (the status): a text part after the image.
	out = AppendJoined([]openai.ChatCompletionMessage{withImage}, openai.ChatCompletionMessage{Role: "user", Content: "status"})
	if len(out[0].MultiContent) != 3 || out[0].MultiContent[2].Text != "status" || out[0].Content != "" {
		t.Fatalf("images + text = %+v", out[0].MultiContent)
	}
	if _, err := json.Marshal(out[0]); err != nil {
		t.Fatalf("the joined message does not marshal: %v", err)
	}
	after, _ := json.Marshal(withImage)
	if string(before) != string(after) {
		t.Errorf("joining wrote the joined message's parts:\n%s\n%s", before, after)
	}
	// images, then images: all parts, in order.
	out = AppendJoined([]openai.ChatCompletionMessage{withImage}, withImage)
	if len(out[0].MultiContent) != 4 || out[0].MultiContent[2].Text != "look" {
		t.Fatalf("images + images = %+v", out[0].MultiContent)
	}
	// An empty text message adds nothing.
	out = AppendJoined([]openai.ChatCompletionMessage{{Role: "user"}}, withImage)
	if len(out[0].MultiContent) != 2 || out[0].MultiContent[0].Text != "look" {
		t.Fatalf("empty + images = %+v", out[0].MultiContent)
	}
}
