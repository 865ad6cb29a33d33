package transcript

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/tokens"
)

// ImageRef names a picture in a message. Its bytes are stored once in the
// blob store under SHA256 (content-addressed); the message keeps only this
// reference, so two messages with the same picture share one copy.
type ImageRef struct {
	// SHA256 is the lowercase hex SHA-256 of the image's bytes, the blob
	// store's key.
	SHA256 string `json:"sha256"`
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string `json:"media_type"`
	// Width and Height are in pixels, from the image's header; zero when
	// unknown.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Size is the image's length in bytes.
	Size int `json:"size,omitempty"`
	// Name is where the image came from (a file's name), for people;
	// never sent.
	Name string `json:"name,omitempty"`
}

// Tokens is the estimated prompt cost of the image (tokens.Image).
func (r ImageRef) Tokens() int { return tokens.Image(r.Width, r.Height) }

// ImageBlock returns the content block of the image r.
func ImageBlock(r ImageRef) Block { return Block{Type: BlockImage, Image: r} }

// Images returns the images of m's blocks, in order.
func (m *Message) Images() []ImageRef {
	var out []ImageRef
	for _, b := range m.Blocks {
		if b.Type == BlockImage {
			out = append(out, b.Image)
		}
	}
	return out
}

// ImageTokens is the estimated prompt cost of m's images.
func ImageTokens(m Message) int {
	n := 0
	for _, r := range m.Images() {
		n += r.Tokens()
	}
	return n
}

// Attachment builds the engine-generated user-role message that carries
// images a tool produced, under a line of text saying what they are. The
// text is trusted engine output; a path in it must already be neutralised.
func Attachment(text string, images []ImageRef, at time.Time) Message {
	m := Injected(KindAttachment, text, at)
	for _, r := range images {
		m.Blocks = append(m.Blocks, ImageBlock(r))
	}
	return m
}

// ImageLoader returns the stored bytes of the image whose SHA-256 is sha.
type ImageLoader func(sha string) ([]byte, error)

// DataURL is the data: URL an image is sent as: its media type and its
// bytes in standard base64. The same bytes always give the same URL, so an
// image's wire form never changes between requests.
func DataURL(mediaType string, data []byte) string {
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(mediaType) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(mediaType)
	b.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	_, _ = enc.Write(data)
	_ = enc.Close()
	return b.String()
}

// imageParts returns the multi-part content of a user message whose wire
// text is text and whose images are imgs: the text first (when there is
// any), then one image_url part per image, whose data: URL load builds
// from the stored bytes. Without a loader (a model that does not accept
// images) or when the bytes cannot be loaded, an image is sent as a line
// of text saying so, deterministically.
// tok is the estimated cost of the images sent.
func imageParts(text string, imgs []ImageRef, load ImageLoader) (parts []chat.Part, tok int) {
	if text != "" {
		parts = append(parts, chat.Part{Type: chat.PartText, Text: text})
	}
	for _, r := range imgs {
		if load == nil {
			parts = append(parts, chat.Part{Type: chat.PartText,
				Text: fmt.Sprintf("[an image (%s) was attached here; it is not sent, since this model does not accept images]", shortSHA(r.SHA256))})
			continue
		}
		data, err := load(r.SHA256)
		if err != nil || len(data) == 0 || r.MediaType == "" {
			parts = append(parts, chat.Part{Type: chat.PartText,
				Text: fmt.Sprintf("[an image (%s) was attached here, but its stored copy is missing]", shortSHA(r.SHA256))})
			continue
		}
		parts = append(parts, chat.Part{Type: chat.PartImage,
			ImageURL: DataURL(r.MediaType, data)})
		tok += r.Tokens()
	}
	return parts, tok
}

// shortSHA is the first 12 digits of a SHA-256, the blob store's shortest
// handle.
func shortSHA(sha string) string {
	sha = strings.Map(func(r rune) rune {
		if ('0' <= r && r <= '9') || ('a' <= r && r <= 'f') {
			return r
		}
		return -1
	}, sha)
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
