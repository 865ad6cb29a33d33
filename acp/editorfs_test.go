package acp

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestTheEditorsBuffersAreWhatTheFileToolsSee: a client that offers the
// file-system methods gives read_file and edit_file its buffer, unsaved
// change included; the edit keeps that change and the client is shown
// the new text.
func TestTheEditorsBuffersAreWhatTheFileToolsSee(t *testing.T) {
	var readResult string
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		switch toolResultCount(r.Messages) {
		case 0:
			return llmtest.Call("read_file", `{"path":"notes.txt"}`)
		case 1:
			readResult = r.Messages[len(r.Messages)-1].Content
			return llmtest.Call("edit_file", `{"path":"notes.txt","old_string":"draft","new_string":"final"}`)
		}
		return llmtest.Text("done")
	})
	f := newFixtureWith(t, script)
	disk := filepath.Join(f.ws, "notes.txt")
	if err := os.WriteFile(disk, []byte("saved draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.buffers = map[string]string{disk: "saved draft\nan unsaved line\n"}
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "tidy the notes")
	if !strings.Contains(readResult, "an unsaved line") {
		t.Errorf("read_file did not see the editor's buffer:\n%s", readResult)
	}
	want := "saved final\nan unsaved line\n"
	if got := f.read(t, "notes.txt"); got != want {
		t.Errorf("the file holds %q; want the edit applied to the buffer, %q", got, want)
	}
	if h.client.wrote[disk] != want {
		t.Errorf("the client was shown %q", h.client.wrote[disk])
	}
}

// toolResultCount counts the tool results among msgs.
func toolResultCount(msgs []llmtest.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

// TestAPictureFromTheEditorReachesAModelThatSees: an image block is sent
// as an image part to a model that accepts images, and refused with the
// reason for one that does not.
func TestAPictureFromTheEditorReachesAModelThatSees(t *testing.T) {
	pic := tinyPNG(t)
	blocks := []acp.ContentBlock{acp.TextBlock("what does this show?"), acp.ImageBlock(base64.StdEncoding.EncodeToString(pic), "image/png")}

	blind := newFixtureWith(t, llmtest.Sequence(llmtest.Text("no")))
	h := blind.connect(t, "")
	id := blind.newSession(t, h).SessionId
	_, err := h.conn.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: blocks})
	if err == nil || !strings.Contains(err.Error(), "does not accept images") {
		t.Errorf("a picture for a model that does not see: %v", err)
	}

	seeing := newFixtureWith(t, llmtest.Sequence(llmtest.Text("a square"), llmtest.Text("another square")))
	seeing.vision = true
	h = seeing.connect(t, "")
	id = seeing.newSession(t, h).SessionId
	if _, err := h.conn.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: blocks}); err != nil {
		t.Fatal(err)
	}
	// A picture alone, without a word, is a prompt too.
	if _, err := h.conn.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: blocks[1:]}); err != nil {
		t.Fatalf("a picture alone: %v", err)
	}
	reqs := seeing.model.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0].Body), `"type":"image_url"`) || !strings.Contains(string(reqs[0].Body), "data:image/png;base64,") {
		t.Errorf("the model got no image part: %d requests", len(reqs))
	}
}

// tinyPNG is a valid 2×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
