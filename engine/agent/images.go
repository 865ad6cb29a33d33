package agent

import (
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Images in the conversation.
//
// A picture the user attaches goes into the user message as an image
// block (transcript.ImageRef) naming its SHA-256; its bytes are stored
// once in the blob store, content-addressed, so the same picture sent
// twice is one copy. The log renders the block, when the message is
// appended and never again, as an image_url part with a data: URL built
// from the stored bytes (WireRules.Images): every later request carries
// the very same bytes, and the provider's prefix cache holds.
//
// Tool results cannot carry images on the chat-completions wire, so a
// picture read_file returns (on a model that accepts images) is answered
// with a short text result saying it is attached, and the pictures of a
// step's results follow those results in one engine-generated user
// message of kind transcript.KindAttachment, naming each one. A step that
// ends early (stopped, or halted by the loop guard) still gets its
// attachment after the answers to the calls that did not run.
//
// A model that does not accept images (Config.Vision false) never gets
// one: a message with images is refused before anything is stored,
// read_file says it cannot show the picture, and images already in a
// reopened session's history go as a line of text saying so.

// ImageInput is a picture the user attaches to a message: the file's
// bytes exactly as read, and a name for people (the file's base name, or
// "pasted image"). The bytes are untrusted: RunWithImages checks them.
type ImageInput struct {
	Name string
	Data []byte
}

// ImageError is the error of a message whose images cannot be sent: the
// model does not accept images, one is not an image, or one is over a
// limit. Nothing was stored or sent; the message can be corrected and
// sent again.
type ImageError struct{ msg string }

// Error implements error.
func (e *ImageError) Error() string { return e.msg }

// NoVisionError is the sentence refusing images for model: it cannot
// see them, and how to say it can.
func NoVisionError(model string) error {
	return &ImageError{msg: fmt.Sprintf("the model %s does not accept images, so the message was not sent; remove the images, or turn on %s if this model does accept them", model, tool.VisionSetting)}
}

// CheckImages checks imgs as RunWithImages will, without storing or
// sending anything: that the session's model accepts images, that there
// are at most images.MaxPerMessage, and that each is a PNG, JPEG, GIF or
// WebP within images.MaxBytes and images.MaxSide. The error is an
// *ImageError.
func (s *Session) CheckImages(imgs []ImageInput) error {
	_, err := checkImages(s.model().Vision, s.model().ModelName, imgs)
	return err
}

// Check checks imgs as RunWithImages will, without storing or
// sending anything: that the session's model accepts images, that there
// are at most images.MaxPerMessage, and that each is a PNG, JPEG, GIF or
// WebP within images.MaxBytes and images.MaxSide. The error is an
// *ImageError.
func (h Images) Check(imgs []ImageInput) error {
	s := h.s
	_, err := checkImages(s.model().Vision, s.model().ModelName, imgs)
	return err
}

// ImageData returns the stored bytes of the picture whose SHA-256 is sha
// (an ImageRef of one of the session's messages), for showing it.
func (s *Session) ImageData(sha string) ([]byte, error) {
	return s.cfg.Store.Blob(sha)
}

// Data returns the stored bytes of the picture whose SHA-256 is sha
// (an ImageRef of one of the session's messages), for showing it.
func (h Images) Data(sha string) ([]byte, error) {
	s := h.s
	return s.cfg.Store.Blob(sha)
}

// checkImages is CheckImages for a model of that name, returning what
// each image is.
func checkImages(vision bool, model string, imgs []ImageInput) ([]images.Info, error) {
	if len(imgs) == 0 {
		return nil, nil
	}
	if !vision {
		return nil, NoVisionError(model)
	}
	if len(imgs) > images.MaxPerMessage {
		return nil, &ImageError{msg: fmt.Sprintf("the message has %d images, more than the %d one message may carry; send them in several messages", len(imgs), images.MaxPerMessage)}
	}
	infos := make([]images.Info, len(imgs))
	for i, img := range imgs {
		info, err := images.Check(imageName(img.Name), img.Data)
		if err != nil {
			return nil, &ImageError{msg: err.Error()}
		}
		infos[i] = info
	}
	return infos, nil
}

// imageName is a picture's name for a message about it.
func imageName(name string) string {
	if name = strings.TrimSpace(transcript.NeutralizeLine(name)); name == "" {
		return "the image"
	}
	return name
}

// storeImages stores each checked image once in the blob store and
// returns the blocks naming them.
func storeImages(st *storage.Store, imgs []ImageInput, infos []images.Info) ([]transcript.Block, error) {
	var out []transcript.Block
	for i, img := range imgs {
		ref, err := storeImage(st, img.Name, img.Data, infos[i])
		if err != nil {
			return nil, err
		}
		out = append(out, transcript.ImageBlock(ref))
	}
	return out, nil
}

// storeImage stores data (an image checked as info) in the blob store and
// returns its reference.
func storeImage(st *storage.Store, name string, data []byte, info images.Info) (transcript.ImageRef, error) {
	sha, err := st.PutBlob(data)
	if err != nil {
		return transcript.ImageRef{}, fmt.Errorf("could not store the image %s (%w); try again", imageName(name), err)
	}
	return transcript.ImageRef{SHA256: sha, MediaType: info.MediaType, Width: info.Width, Height: info.Height,
		Size: info.Size, Name: transcript.NeutralizeLine(name)}, nil
}

// imageLoader reads an image's bytes for the wire from the blob store.
func imageLoader(st *storage.Store) transcript.ImageLoader {
	return func(sha string) ([]byte, error) { return st.Blob(sha) }
}

// wireRules are the session's wire rules: WireRules, sending the images
// of its messages when its model accepts them (vision).
func wireRules(st *storage.Store, vision bool) transcript.WireRules {
	r := WireRules()
	if vision && st != nil {
		r.Images = imageLoader(st)
	}
	return r
}

// attachHeld commits the turn's held pictures, if any, after the step's
// results.
func (t *turnLoop) attachHeld(h *step.HeldImages) error {
	s := t.s
	msgs := h.Take(s.cfg.now())
	if len(msgs) == 0 {
		return nil
	}
	return s.commit(msgs, nil)
}
