package agent

import (
	"fmt"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/step"
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

// Check checks imgs as RunWithImages will, without storing or
// sending anything: that the session's model accepts images, that there
// are at most images.MaxPerMessage, and that each is a PNG, JPEG, GIF or
// WebP within images.MaxBytes and images.MaxSide. The error is an
// *images.Error.
func (h Images) Check(imgs []images.Input) error {
	m := h.s.model()
	_, err := images.CheckAll(m.Vision, m.ModelName, imgs)
	return err
}

// Data returns the stored bytes of the picture whose SHA-256 is sha
// (an ImageRef of one of the session's messages), for showing it.
func (h Images) Data(sha string) ([]byte, error) { return h.s.cfg.Store.Blob(sha) }

// storeImages stores each checked image once in the blob store and
// returns the blocks naming them.
func storeImages(st *storage.Store, imgs []images.Input, infos []images.Info) ([]transcript.Block, error) {
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
		return transcript.ImageRef{}, fmt.Errorf("could not store the image %s (%w); try again", images.Name(name), err)
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
