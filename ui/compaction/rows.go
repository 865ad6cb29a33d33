package compaction

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// previewList shows preview rows: pinned ones bold, changed ones muted
// with the change named. Clicking a row opens its whole message.
func (v *Preview) previewList(rows *[]previewRow) *widget.List {
	l := widget.NewList(
		func() int { return len(*rows) },
		func() fyne.CanvasObject { return tw.StyledText("", theme.ColorNameForeground, false) },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id >= len(*rows) {
				return
			}
			r := (*rows)[id]
			text, color := r.Text, theme.ColorNameForeground
			switch {
			case r.Added:
				color = theme.ColorNameSuccess
			case r.Pinned:
				color = theme.ColorNamePrimary
			case r.Change != "":
				text, color = r.Change+" · "+text, theme.ColorNamePlaceHolder
			}
			tw.SetStyledText(o.(*widget.RichText), text, color, r.Pinned || r.Added)
		})
	l.OnSelected = func(id widget.ListItemID) {
		l.Unselect(id)
		if id < len(*rows) {
			v.openRow((*rows)[id])
		}
	}
	return l
}

// openRow shows a preview row's whole message in a dialog of its own.
func (v *Preview) openRow(r previewRow) {
	v.opened = r.Full
	if v.win == nil {
		return
	}
	full := r.Full
	if r.Change != "" {
		full = "This compaction would " + r.Change + " this message.\n\n" + full
	}
	body := &widget.Entry{MultiLine: true, Wrapping: fyne.TextWrapWord, Text: full}
	d := dialog.NewCustom(text.FirstLine(r.Text, 80), "Close", container.NewScroll(body), v.win)
	d.Resize(fyne.NewSize(780, 520))
	d.Show()
}

// nothingToApply says plainly why a plan would change nothing.
func nothingToApply(plan compact.Plan) string {
	var skipped []string
	for _, l := range plan.Layers {
		if l.Skipped != "" {
			skipped = append(skipped, l.Name+" ("+l.Skipped+")")
		}
	}
	why := "every layer ran and found nothing to change: old tool results are already cleared, and what is left is pinned or recent"
	if len(skipped) == len(plan.Layers) && len(skipped) > 0 {
		why = "every layer was skipped: " + strings.Join(skipped, "; ")
	}
	if plan.Threshold > 0 && plan.TokensBefore < plan.Threshold {
		why += "; the level is under the threshold, so no summary is written"
	}
	return "nothing would change: " + why + "."
}
