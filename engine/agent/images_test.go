package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// squarePNG is a w×h PNG with a little content, so its bytes are its own.
func squarePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// visionHarness is a harness whose model accepts images.
func visionHarness(t *testing.T, script llmtest.Script) *harness {
	h := newHarness(t, script, nil)
	h.cfg.ModelName, h.cfg.Vision = "gpt-4o", true
	return h
}

// imagePart is the wire JSON of an image part carrying data.
func imagePart(data []byte) string {
	return `{"type":"image_url","image_url":{"url":"` + transcript.DataURL("image/png", data) + `"}}`
}

// rawMessages returns a request body's messages as raw JSON.
func rawMessages(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = string(m)
	}
	return out
}

func TestUserImageIsSentAndStaysByteIdentical(t *testing.T) {
	h := visionHarness(t, llmtest.Sequence(llmtest.Text("A grey square."), llmtest.Text("You are welcome."), llmtest.Text("The same square.")))
	h.cfg.StatusMode = status.OnChange // every request extends the last one byte for byte
	pic := squarePNG(t, 1024, 1024)
	s := h.session("img")
	ctx := context.Background()
	if _, err := s.RunWithImages(ctx, "What is in this picture?", []images.Input{{Name: "shot.png", Data: pic}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "Thanks."); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	for i, r := range reqs {
		user := r.Messages[1]
		if user.Role != "user" || len(user.Images) != 1 || !bytes.Equal(user.Images[0].Data, pic) || user.Images[0].MediaType != "image/png" {
			t.Fatalf("request %d: the user message carries %+v; want the picture's exact bytes", i, user.Images)
		}
		if !strings.Contains(user.Content, "What is in this picture?") {
			t.Errorf("request %d: the text is gone: %q", i, user.Content)
		}
		if n := bytes.Count(r.Body, []byte(imagePart(pic))); n != 1 {
			t.Errorf("request %d carries the image part %d times; want once, as a data URL of the exact bytes", i, n)
		}
	}
	// The second request begins with the first one's messages, byte for
	// byte: the image did not change between them.
	first, second := rawMessages(t, reqs[0].Body), rawMessages(t, reqs[1].Body)
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("message %d changed between requests:\n%.300s\n%.300s", i, first[i], second[i])
		}
	}

	// The message stores the reference, the store the bytes, once.
	msgs := s.Snapshot().Messages()
	refs := msgs[0].Images()
	if len(refs) != 1 || refs[0].Width != 1024 || refs[0].Height != 1024 || refs[0].Name != "shot.png" || refs[0].Size != len(pic) {
		t.Fatalf("stored image = %+v", refs)
	}
	if got, err := s.Images().Data(refs[0].SHA256); err != nil || !bytes.Equal(got, pic) {
		t.Fatalf("ImageData = %d bytes, %v", len(got), err)
	}
	// The estimate: 765 tokens for a 1024×1024 picture, in the count.
	if n := transcript.ImageTokens(msgs[0]); n != 765 {
		t.Errorf("image estimate = %d; want 765", n)
	}
	if msgs[0].Tokens < 765+transcript.MessageTokens(transcript.Message{Role: transcript.User, Blocks: msgs[0].Blocks[:len(msgs[0].Blocks)-1]}) {
		t.Errorf("the message's count %d leaves the image out", msgs[0].Tokens)
	}

	// The same picture again: one blob, two messages naming it.
	if _, err := s.RunWithImages(ctx, "And now?", []images.Input{{Name: "again.png", Data: pic}}); err != nil {
		t.Fatal(err)
	}
	recs, err := h.st.Log("img", 1)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, r := range recs {
		if bytes.Contains(r.Data, []byte(refs[0].SHA256)) {
			named++
		}
		if len(r.Data) > 4<<10 {
			t.Errorf("a stored message holds %d bytes; the image must live in the blob store only", len(r.Data))
		}
	}
	if named != 2 {
		t.Errorf("%d stored messages name the picture; want 2", named)
	}
	// Content-addressed: the one blob is the one key for the bytes.
	if data, sha, err := h.st.BlobByPrefix(refs[0].SHA256[:storage.MinBlobPrefix]); err != nil || sha != refs[0].SHA256 || !bytes.Equal(data, pic) {
		t.Errorf("the blob under the picture's hash: %d bytes, %s, %v", len(data), sha, err)
	}

	// Reopened, the session sends the same bytes.
	again, err := Open(h.cfg, "img")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	a, b := again.Audit().NextRequest(), s.Audit().NextRequest()
	ja, _ := json.Marshal(a.Messages)
	jb, _ := json.Marshal(b.Messages)
	if !bytes.Equal(ja, jb) {
		t.Error("the reopened session assembles different bytes")
	}
}

func TestImagesRefusedWithoutVision(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("unused")), nil) // deepseek-chat
	s := h.session("blind")
	_, err := s.RunWithImages(context.Background(), "look", []images.Input{{Name: "shot.png", Data: squarePNG(t, 8, 8)}})
	var ie *images.Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "deepseek-chat does not accept images") || !strings.Contains(err.Error(), images.VisionSetting) {
		t.Fatalf("err = %v; want an images.Error saying the model does not accept images and naming the setting", err)
	}
	if s.Images().Check([]images.Input{{Data: squarePNG(t, 8, 8)}}) == nil {
		t.Error("CheckImages accepts an image for a model without vision")
	}
	if n := len(h.srv.Requests()); n != 0 || len(s.Snapshot().Messages()) != 0 {
		t.Errorf("%d requests, %d messages; want nothing sent or stored", n, len(s.Snapshot().Messages()))
	}
}

func TestBadImagesRefused(t *testing.T) {
	h := visionHarness(t, llmtest.Sequence(llmtest.Text("unused")))
	s := h.session("bad")
	many := make([]images.Input, 21)
	for i := range many {
		many[i] = images.Input{Name: "p.png", Data: squarePNG(t, 2, 2)}
	}
	for name, c := range map[string]struct {
		imgs []images.Input
		want string
	}{
		"not an image": {[]images.Input{{Name: "notes.txt", Data: []byte("hello")}}, "notes.txt is not a PNG, JPEG, GIF or WebP image"},
		"too many":     {many, "21 images, more than the 20"},
		"too large":    {[]images.Input{{Name: "big.png", Data: append(squarePNG(t, 2, 2), make([]byte, 5<<20)...)}}, "over the 5 MB limit"},
	} {
		_, err := s.RunWithImages(context.Background(), "look", c.imgs)
		var ie *images.Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want %q", name, err, c.want)
		}
	}
	if len(h.srv.Requests()) != 0 || len(s.Snapshot().Messages()) != 0 {
		t.Error("a refused image sent or stored something")
	}
}

func TestReadFileAttachesTheImage(t *testing.T) {
	for _, vision := range []bool{true, false} {
		h := visionHarness(t, llmtest.Sequence(llmtest.Call("read_file", `{"path":"shots/ui.png"}`), llmtest.Text("I see a grey square.")))
		h.cfg.Vision = vision
		pic := squarePNG(t, 640, 480)
		os.MkdirAll(filepath.Join(h.ws, "shots"), 0o755)
		if err := os.WriteFile(filepath.Join(h.ws, "shots", "ui.png"), pic, 0o644); err != nil {
			t.Fatal(err)
		}
		s := h.session("read")
		if _, err := s.Run(context.Background(), "Look at shots/ui.png."); err != nil {
			t.Fatal(err)
		}
		h.noInvalid()
		reqs := h.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("vision %v: %d requests", vision, len(reqs))
		}
		msgs := reqs[1].Messages
		var result llmtest.Message
		var after []llmtest.Message
		for i, m := range msgs {
			if m.Role == "tool" {
				result, after = m, msgs[i+1:]
			}
		}
		if !vision {
			if !strings.Contains(result.Content, "cannot see images") || strings.Contains(string(reqs[1].Body), "image_url") {
				t.Errorf("without vision: result %q, and the request must carry no image", result.Content)
			}
			continue
		}
		if !strings.Contains(result.Content, "attached below") {
			t.Errorf("result = %q; want it to say the image is attached", result.Content)
		}
		if len(after) != 1 || after[0].Role != "user" || len(after[0].Images) != 1 || !bytes.Equal(after[0].Images[0].Data, pic) {
			t.Fatalf("after the result: %+v; want one user message with the picture", after)
		}
		if !strings.HasPrefix(after[0].Content, "<tool_images>") || !strings.Contains(after[0].Content, "shots/ui.png (read_file, call ") {
			t.Errorf("attachment text = %q", after[0].Content)
		}
		stored := s.Snapshot().Messages()
		att := stored[len(stored)-2]
		if att.Kind != transcript.KindAttachment || len(att.Images()) != 1 || len(transcript.Forged(att)) != 0 {
			t.Errorf("stored attachment = %+v", att)
		}
	}
}
