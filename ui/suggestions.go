package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/demo"
)

// demoSuggestions is the row of the demo's follow-up prompts, shown above
// the prompt entry in demo sessions only.
func (u *UI) demoSuggestions() *fyne.Container {
	row := container.NewHBox(&widget.Label{Text: "Try:", Importance: widget.LowImportance})
	labels := map[string]string{demo.ExplorePrompt: "Explore the project (fills the window)", demo.RecallPrompt: "Ask the archive (after New cycle)",
		demo.DelegatePrompt: "Delegate to two sub-agents"}
	for _, p := range demo.FollowUps {
		prompt := p
		row.Add(&widget.Button{Text: labels[prompt], Importance: widget.LowImportance, OnTapped: func() {
			if u.live == nil || u.live.job.running {
				return
			}
			u.input.prompt.SetText(prompt)
			u.send()
		}})
	}
	return row
}

// setSuggestions enables the demo's suggested prompts when a turn can
// start, and says why they are off while one runs.
func (u *UI) setSuggestions(on bool) {
	if u.input.suggest == nil {
		return
	}
	for i, o := range u.input.suggest.Objects {
		switch v := o.(type) {
		case *widget.Label:
			if i == 0 {
				v.SetText("Try:")
				if !on {
					v.SetText("Try (when the turn ends):")
				}
			}
		case *widget.Button:
			enableIf(v, on)
		}
	}
}
