package step

import (
	"context"
	"errors"
	"time"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
)

// ErrClosing is the cause a host gives when it cancels a conversation's
// step because it is closing (context.WithCancelCause): the part of a
// reply kept is then marked ClosedNote, not StoppedNote.
var ErrClosing = errors.New("the app is closing")

// The notes that end the part of a reply kept when its step was cut short
// while the reply streamed: by the user, or by the host closing.
const (
	StoppedNote = "(stopped by the user)"
	ClosedNote  = "(cut short: Tally was closing)"
)

// Partial is the part of a reply that had streamed when ctx ended, kept
// as an assistant message without its calls: redacted as a reply is, and
// ended by the note that says why it stopped (see ErrClosing).
func Partial(ctx context.Context, content string, at time.Time) transcript.Message {
	content, n := secrets.Count(content)
	note := StoppedNote
	if errors.Is(context.Cause(ctx), ErrClosing) {
		note = ClosedNote
	}
	m := transcript.AssistantReply(content+"\n\n"+note, "", nil, at)
	m.Redacted = n
	return m
}
