package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/tokens"
)

func imageStore(blobs ...[]byte) (ImageLoader, map[string]int, []ImageRef) {
	m := map[string][]byte{}
	loads := map[string]int{}
	var refs []ImageRef
	for _, b := range blobs {
		sum := sha256.Sum256(b)
		sha := hex.EncodeToString(sum[:])
		m[sha] = b
		refs = append(refs, ImageRef{SHA256: sha, MediaType: "image/png", Width: 1024, Height: 1024, Size: len(b), Name: "shot.png"})
	}
	return func(sha string) ([]byte, error) {
		loads[sha]++
		if b, ok := m[sha]; ok {
			return b, nil
		}
		return nil, errors.New("not found")
	}, loads, refs
}

func TestUserImageWire(t *testing.T) {
	data := []byte("\x89PNG\r\n\x1a\nnot really a png")
	load, _, refs := imageStore(data)
	msg := UserText("<turn_meta>\nx\n</turn_meta>", "what is this?", time.Time{})
	msg.Blocks = append(msg.Blocks, ImageBlock(refs[0]))
	if msg.Text() != "<turn_meta>\nx\n</turn_meta>\nwhat is this?" || msg.Body() != "what is this?" {
		t.Fatalf("Text = %q, Body = %q: images have no text", msg.Text(), msg.Body())
	}
	log := NewAppendLog(nil, WireRules{FoldTurnMeta: true, Images: load})
	e := log.Append(msg)
	if e.Wire.Content != "" || len(e.Wire.Parts) != 2 {
		t.Fatalf("wire = %+v; want a text part and an image part", e.Wire)
	}
	if p := e.Wire.Parts[0]; p.Type != chat.PartText || p.Text != msg.Text() {
		t.Errorf("first part = %+v; want the message's text", p)
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
	if p := e.Wire.Parts[1]; p.Type != chat.PartImage || p.ImageURL != want {
		t.Errorf("image part = %+v; want a data URL of the exact bytes", p)
	}
	if !bytes.Contains(e.Bytes, []byte(`"type":"image_url","image_url":{"url":"`+want+`"}`)) {
		t.Errorf("wire bytes do not carry the image part: %.200s", e.Bytes)
	}
	textOnly := WireTokens(e.Wire, tokens.Count)
	if e.Tokens != textOnly+765 || e.Msg.Tokens != e.Tokens {
		t.Errorf("tokens = %d; want the text's %d plus 765 for a 1024×1024 image", e.Tokens, textOnly)
	}
	if MessageTokens(msg) != e.Tokens {
		t.Errorf("MessageTokens = %d; want %d, the log's count", MessageTokens(msg), e.Tokens)
	}

	// The next turn's meta folds as before, and the images come after it.
	again := UserText("<turn_meta>\nx\n</turn_meta>", "and this?", time.Time{})
	again.Blocks = append(again.Blocks, ImageBlock(refs[0]))
	e2 := log.Append(again)
	if !strings.HasPrefix(e2.Wire.Parts[0].Text, TurnMetaUnchanged) {
		t.Errorf("folded text = %q", e2.Wire.Parts[0].Text)
	}

	// Stored and read back, then rendered again: the same bytes.
	b, err := Encode(e.Msg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Images(); len(got) != 1 || got[0] != refs[0] {
		t.Fatalf("decoded images = %+v; want %+v", got, refs)
	}
	other := NewAppendLog(nil, WireRules{FoldTurnMeta: true, Images: load})
	if e3 := other.Append(back); !bytes.Equal(e3.Bytes, e.Bytes) || e3.Tokens != e.Tokens {
		t.Error("the stored message renders different bytes")
	}
	rec := log.Rebuild("test", log.Messages(), time.Time{})
	if rec.BeforeHash != rec.AfterHash {
		t.Error("a rebuild of the same messages changed the wire bytes")
	}
}

func TestImageWithoutItsBytes(t *testing.T) {
	_, _, refs := imageStore([]byte("x"))
	m := Attachment("<tool_images>\n- a.png (read_file, call c1): PNG\n</tool_images>", refs, time.Time{})
	if m.Role != User || m.Kind != KindAttachment || len(m.Images()) != 1 {
		t.Fatalf("Attachment = %+v", m)
	}
	for name, c := range map[string]struct {
		rules WireRules
		want  string
	}{
		"no loader":    {WireRules{}, "not sent, since this model does not accept images"},
		"missing blob": {WireRules{Images: func(string) ([]byte, error) { return nil, errors.New("gone") }}, "stored copy is missing"},
	} {
		e := NewAppendLog(nil, c.rules).Append(m)
		if len(e.Wire.Parts) != 2 || e.Wire.Parts[1].Type != chat.PartText ||
			!strings.Contains(e.Wire.Parts[1].Text, c.want) ||
			!strings.Contains(e.Wire.Parts[1].Text, refs[0].SHA256[:12]) {
			t.Errorf("%s: wire = %+v; want a line saying the image is missing", name, e.Wire.Parts)
		}
		if e.Tokens != WireTokens(e.Wire, tokens.Count) {
			t.Errorf("%s: a missing image is counted", name)
		}
	}
	if len(Forged(m)) != 0 {
		t.Errorf("the attachment message looks forged: %v", Forged(m))
	}
}
