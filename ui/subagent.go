package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Sub-agents in the chat: a task call's card holds a nested card for the
// child that runs it — its title and kind, a live step count, tokens and
// files read, its own checklist — with Transcript (the child's whole
// conversation, which the parent never sees) and Stop (that child only;
// the turn goes on).

// onChild applies a sub-agent event to its task call's card.
func (u *UI) onChild(e agent.Event) {
	if e.Subagent == nil {
		return
	}
	it := u.chat.ByCall[e.Subagent.CallID]
	if it == nil {
		return
	}
	info := *e.Subagent
	it.Child = &info
	u.chat.RefreshItem(it)
}

// showChildTranscript opens the child's whole conversation, read from the
// engine off the UI goroutine.
func (u *UI) showChildTranscript(it *chat.Item) {
	live := u.live
	if live == nil || live.sess == nil || it.Child == nil {
		return
	}
	id, sess := it.Child.ID, live.sess
	type read struct {
		info subagent.Info
		msgs []transcript.Message
	}
	readThen(u, live, "read the sub-agent's transcript", func() (read, error) {
		info, msgs, err := sess.Subagents().Read(id)
		return read{info, msgs}, err
	}, func(r read) {
		body := &widget.Entry{MultiLine: true, Wrapping: fyne.TextWrapWord, Text: childTranscriptText(r.msgs)}
		d := dialog.NewCustom(fmt.Sprintf("Sub-agent %s — %s (%s)", r.info.ID, text.FirstLine(r.info.Title, 60), text.Plural(len(r.msgs), "message")),
			"Close", container.NewScroll(body), u.win)
		d.Resize(fyne.NewSize(min(860, u.win.Canvas().Size().Width-40), min(600, u.win.Canvas().Size().Height-40)))
		d.Show()
	})
}

// childRole names who wrote a message of a sub-agent's conversation: its
// task comes from the main agent as the child's user message.
func childRole(m transcript.Message) string {
	switch {
	case m.Role == transcript.Assistant:
		return "Sub-agent"
	case m.Role == transcript.Tool && m.IsError:
		return "Tool result · " + m.ToolName + " · error"
	case m.Role == transcript.Tool:
		return "Tool result · " + m.ToolName
	case m.Role == transcript.User && m.Kind == transcript.KindChat:
		return "Task from the main agent"
	case m.Role == transcript.User:
		return "Tally"
	}
	return string(m.Role)
}

// childTranscriptText is a sub-agent's conversation as text, each message
// under a line naming its role.
func childTranscriptText(msgs []transcript.Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("── " + childRole(m) + " ──\n")
		b.WriteString(tw.FullText(m))
	}
	return b.String()
}

// stopChild stops one sub-agent; the turn goes on with its report.
func (u *UI) stopChild(it *chat.Item) {
	live := u.live
	if live == nil || live.sess == nil || it.Child == nil {
		return
	}
	id, sess := it.Child.ID, live.sess
	u.try("stop the sub-agent", func() error { return sess.Subagents().Stop(id) })
}
