package images

import (
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
)

// VisionSetting is the name of the setting that says a model accepts
// images, as the messages that refuse a picture name it.
const VisionSetting = `"The model accepts images" in Settings`

// Input is a picture the user attaches to a message: the file's bytes
// exactly as read, and a name for people (the file's base name, or
// "pasted image"). The bytes are untrusted: CheckAll checks them.
type Input struct {
	Name string
	Data []byte
}

// Error is the error of a message whose images cannot be sent: the model
// does not accept images, one is not an image, or one is over a limit.
// Nothing was stored or sent; the message can be corrected and sent
// again.
type Error struct{ msg string }

// Error implements error.
func (e *Error) Error() string { return e.msg }

// NoVision is the sentence refusing images for model: it cannot see
// them, and how to say it can.
func NoVision(model string) error {
	return &Error{msg: fmt.Sprintf("the model %s does not accept images, so the message was not sent; remove the images, or turn on %s if this model does accept them", model, VisionSetting)}
}

// CheckAll checks the pictures of one message for a model of that name
// (vision: it accepts images): that there are at most MaxPerMessage, and
// that each is a PNG, JPEG, GIF or WebP within MaxBytes and MaxSide. It
// returns what each one is; the error is an *Error.
func CheckAll(vision bool, model string, in []Input) ([]Info, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if !vision {
		return nil, NoVision(model)
	}
	if len(in) > MaxPerMessage {
		return nil, &Error{msg: fmt.Sprintf("the message has %d images, more than the %d one message may carry; send them in several messages", len(in), MaxPerMessage)}
	}
	infos := make([]Info, len(in))
	for i, img := range in {
		info, err := Check(Name(img.Name), img.Data)
		if err != nil {
			return nil, &Error{msg: err.Error()}
		}
		infos[i] = info
	}
	return infos, nil
}

// Name is a picture's name for a message about it: neutralised, "the
// image" when it has none.
func Name(name string) string {
	if name = strings.TrimSpace(transcript.NeutralizeLine(name)); name == "" {
		return "the image"
	}
	return name
}
