package llm

import (
	"encoding/json"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
)

func imagePart(url string) chat.Part {
	return chat.Part{Type: chat.PartImage, ImageURL: url}
}

func textPart(s string) chat.Part {
	return chat.Part{Type: chat.PartText, Text: s}
}

// Joining a user message with images keeps every part in order, merges
// the text across the join, and writes neither message's parts.
func TestAppendJoinedParts(t *testing.T) {
	withImage := chat.Message{Role: "user", Parts: []chat.Part{textPart("look"), imagePart("data:image/png;base64,AA==")}}
	before, _ := json.Marshal(withImage)

	// text, then a message with images: the texts merge.
	out := AppendJoined([]chat.Message{{Role: "user", Content: "a"}}, withImage)
	if len(out) != 1 || out[0].Content != "" || len(out[0].Parts) != 2 ||
		out[0].Parts[0].Text != "a"+UserJoin+"look" || out[0].Parts[1].ImageURL != "data:image/png;base64,AA==" {
		t.Fatalf("text + images = %+v", out)
	}
	// images, then text (the status): a text part after the image.
	out = AppendJoined([]chat.Message{withImage}, chat.Message{Role: "user", Content: "status"})
	if len(out[0].Parts) != 3 || out[0].Parts[2].Text != "status" || out[0].Content != "" {
		t.Fatalf("images + text = %+v", out[0].Parts)
	}
	if _, err := json.Marshal(out[0]); err != nil {
		t.Fatalf("the joined message does not marshal: %v", err)
	}
	after, _ := json.Marshal(withImage)
	if string(before) != string(after) {
		t.Errorf("joining wrote the joined message's parts:\n%s\n%s", before, after)
	}
	// images, then images: all parts, in order.
	out = AppendJoined([]chat.Message{withImage}, withImage)
	if len(out[0].Parts) != 4 || out[0].Parts[2].Text != "look" {
		t.Fatalf("images + images = %+v", out[0].Parts)
	}
	// An empty text message adds nothing.
	out = AppendJoined([]chat.Message{{Role: "user"}}, withImage)
	if len(out[0].Parts) != 2 || out[0].Parts[0].Text != "look" {
		t.Fatalf("empty + images = %+v", out[0].Parts)
	}
}
