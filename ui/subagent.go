package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Sub-agents in the chat: a task call's card holds a nested card for the
// child that runs it — its title and kind, a live step count, tokens and
// files read, its own checklist — with Transcript (the child's whole
// conversation, which the parent never sees) and Stop (that child only;
// the turn goes on).

// childText is the nested card's status line.
func childText(c *subagent.Info) string {
	state := c.Status
	switch state {
	case subagent.Running:
		state = "running"
	case step.ReasonDone:
		state = "done"
	case step.ReasonStepLimit:
		state = "stopped at its step limit"
	case step.ReasonCancelled:
		state = "stopped"
	}
	s := fmt.Sprintf("Sub-agent %s · %s · %s · step %d of %d · %s tokens · %s read",
		c.ID, c.Kind, state, c.Steps, c.MaxSteps, tw.TokensShort(c.Tokens()), text.Plural(c.FilesRead, "file"))
	if c.Error != "" {
		s += " · " + text.FirstLine(c.Error, 120)
	}
	if len(c.Checklist) > 0 {
		s += "\nChecklist " + tw.ChecklistSummary(c.Checklist)
	}
	return s
}

// childCard is the nested part of a task call's card.
type childCard struct {
	box        *fyne.Container
	text       *widget.Label
	transcript *widget.Button
	stop       *widget.Button
	item       *chatItem
}

func newChildCard(onTranscript, onStop func(it *chatItem)) *childCard {
	c := &childCard{}
	c.text = &widget.Label{Wrapping: fyne.TextWrapWord}
	c.transcript = &widget.Button{Text: "Transcript", Icon: theme.DocumentIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if c.item != nil && onTranscript != nil {
			onTranscript(c.item)
		}
	}}
	c.stop = &widget.Button{Text: "Stop", Icon: theme.MediaStopIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if c.item != nil && onStop != nil {
			onStop(c.item)
		}
	}}
	bar := container.NewHBox(c.transcript, c.stop)
	c.box = container.NewPadded(container.NewVBox(c.text, bar))
	return c
}

// set shows it's child, or hides the nested card when it has none.
func (c *childCard) set(it *chatItem) {
	c.item = it
	if it.child == nil {
		c.box.Hide()
		return
	}
	c.text.SetText(childText(it.child))
	tw.ShowIf(c.stop, it.child.Status == subagent.Running)
	c.box.Show()
}

// onChild applies a sub-agent event to its task call's card.
func (u *UI) onChild(e agent.Event) {
	if e.Subagent == nil {
		return
	}
	it := u.chat.byCall[e.Subagent.CallID]
	if it == nil {
		return
	}
	info := *e.Subagent
	it.child = &info
	u.chat.refreshItem(it)
}

// attachChildren puts the stored children on their task cards after a
// session is shown again.
func (c *chatView) attachChildren(children []subagent.Info) {
	for i := range children {
		if it := c.byCall[children[i].CallID]; it != nil {
			it.child = &children[i]
		}
	}
}

// showChildTranscript opens the child's whole conversation, read from the
// engine off the UI goroutine.
func (u *UI) showChildTranscript(it *chatItem) {
	live := u.live
	if live == nil || live.sess == nil || it.child == nil {
		return
	}
	id, sess := it.child.ID, live.sess
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
		b.WriteString(fullMessageText(m))
	}
	return b.String()
}

// stopChild stops one sub-agent; the turn goes on with its report.
func (u *UI) stopChild(it *chatItem) {
	live := u.live
	if live == nil || live.sess == nil || it.child == nil {
		return
	}
	id, sess := it.child.ID, live.sess
	u.try("stop the sub-agent", func() error { return sess.Subagents().Stop(id) })
}
