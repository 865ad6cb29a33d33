package chat

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// ChildText is the nested card's status line.
func ChildText(c *subagent.Info) string {
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
	Box        *fyne.Container // the nested card
	text       *widget.Label
	Transcript *widget.Button // opens the child's transcript
	Stop       *widget.Button // stops the child
	item       *Item
}

func newChildCard(onTranscript, onStop func(it *Item)) *childCard {
	c := &childCard{}
	c.text = &widget.Label{Wrapping: fyne.TextWrapWord}
	c.Transcript = &widget.Button{Text: "Transcript", Icon: theme.DocumentIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if c.item != nil && onTranscript != nil {
			onTranscript(c.item)
		}
	}}
	c.Stop = &widget.Button{Text: "Stop", Icon: theme.MediaStopIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if c.item != nil && onStop != nil {
			onStop(c.item)
		}
	}}
	bar := container.NewHBox(c.Transcript, c.Stop)
	c.Box = container.NewPadded(container.NewVBox(c.text, bar))
	return c
}

// set shows it's child, or hides the nested card when it has none.
func (c *childCard) set(it *Item) {
	c.item = it
	if it.Child == nil {
		c.Box.Hide()
		return
	}
	c.text.SetText(ChildText(it.Child))
	tw.ShowIf(c.Stop, it.Child.Status == subagent.Running)
	c.Box.Show()
}

// AttachChildren puts the stored children on their task cards after a
// session is shown again.
func (c *View) AttachChildren(children []subagent.Info) {
	for i := range children {
		// A call ID is unique in the log, not in the history: after a
		// rewind the model's next calls may reuse the IDs of those it
		// took out, so only a task call gets a child.
		if it := c.ByCall[children[i].CallID]; it != nil && it.Call.Name == subagent.TaskToolName {
			it.Child = &children[i]
		}
	}
}
