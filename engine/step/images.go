package step

import (
	"fmt"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// ImageStore stores a picture a tool returned, named name and checked as
// info, and returns its reference.
type ImageStore func(name string, data []byte, info images.Info) (transcript.ImageRef, error)

// HeldImages are the pictures a step's tool results returned, held until
// the step's last result is in: tool results cannot carry images on the
// chat-completions wire, so a picture read_file returns is answered with a
// short text result, and the pictures of a step's results follow those
// results in one engine-generated user message of kind
// transcript.KindAttachment, naming each one. A step that ends early still
// gets its attachment after the answers to the calls that did not run.
type HeldImages struct {
	refs  []transcript.ImageRef
	lines []string
}

// Hold stores the picture of res, the result of call, and holds it for
// the step's attachment; a result without one holds nothing.
func (h *HeldImages) Hold(store ImageStore, call transcript.ToolCall, res tool.Result) error {
	if res.Image == nil {
		return nil
	}
	name := call.Name
	if len(res.Paths) > 0 {
		name = res.Paths[0]
	}
	ref, err := store(name, res.Image.Data, res.Image.Info)
	if err != nil {
		return err
	}
	h.refs = append(h.refs, ref)
	h.lines = append(h.lines, fmt.Sprintf("- %s (%s, call %s): %s", ref.Name, call.Name, transcript.NeutralizeLine(call.ID), res.Image.Info))
	return nil
}

// Take returns the attachment messages of the held pictures, at most
// images.MaxPerMessage to a message, and holds nothing after.
func (h *HeldImages) Take(at time.Time) []transcript.Message {
	var out []transcript.Message
	for i := 0; i < len(h.refs); i += images.MaxPerMessage {
		j := min(i+images.MaxPerMessage, len(h.refs))
		text := "<tool_images>\nThe images returned by the tool results above, in order:\n" + strings.Join(h.lines[i:j], "\n") + "\n</tool_images>"
		out = append(out, transcript.Attachment(text, h.refs[i:j], at))
	}
	h.refs, h.lines = nil, nil
	return out
}
