package widget

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/diff"
	"github.com/tally-dev/tally/internal/text"
)

// Diffs as people read them: a header naming the file (new, deleted,
// binary), then each hunk with its "@@" line, old and new line numbers,
// additions in the success colour and removals in the error colour. With
// ticks, each hunk has a check box; what is ticked is what is written.

// maxDiffLines caps the lines drawn for one diff; the rest is summarised.
const maxDiffLines = 400

// diffHeader names the file and what happens to it.
func diffHeader(d *diff.Diff) string {
	switch {
	case d.New:
		return d.Path + " — new file"
	case d.Deleted:
		return d.Path + " — deleted"
	case d.Binary:
		return d.Path + " — binary file, not shown"
	case d.TooLarge:
		return d.Path + " — too large to show"
	case len(d.Hunks) == 0:
		return d.Path + " — content unchanged"
	}
	return fmt.Sprintf("%s — %s", d.Path, text.Plural(len(d.Hunks), "change"))
}

// DiffView draws d: its header, then each hunk with its line numbers, at
// most maxDiffLines lines in all (the rest is summarised). With ticks
// non-nil each hunk gets a check box bound to ticks[i], so what is ticked
// is what the caller writes; onTick runs after a box changes.
func DiffView(d *diff.Diff, ticks []bool, onTick func()) fyne.CanvasObject {
	box := container.NewVBox(&widget.Label{Text: diffHeader(d), TextStyle: fyne.TextStyle{Bold: true, Monospace: true}, Truncation: fyne.TextTruncateEllipsis})
	drawn := 0
	for i, h := range d.Hunks {
		head := fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		if ticks != nil && i < len(ticks) {
			i := i
			chk := widget.NewCheck(fmt.Sprintf("Apply change %d of %d   %s", i+1, len(d.Hunks), head), nil)
			chk.Checked = ticks[i]
			chk.OnChanged = func(on bool) {
				ticks[i] = on
				if onTick != nil {
					onTick()
				}
			}
			box.Add(chk)
		} else {
			box.Add(&widget.Label{Text: head, Importance: widget.LowImportance, TextStyle: fyne.TextStyle{Monospace: true}})
		}
		if drawn >= maxDiffLines {
			continue
		}
		rt := &widget.RichText{Wrapping: fyne.TextWrapBreak, Scroll: container.ScrollNone}
		for _, l := range h.Lines {
			if drawn >= maxDiffLines {
				rt.Segments = append(rt.Segments, diffSegment("… the rest of the diff is not drawn here; `tally changes` prints it whole", theme.ColorNamePlaceHolder))
				break
			}
			drawn++
			rt.Segments = append(rt.Segments, diffSegment(diffLine(l), diffColor(l.Kind)))
		}
		box.Add(rt)
	}
	return box
}

// diffLine is one line with its numbers: "  12    │ -old text".
func diffLine(l diff.Line) string {
	num := func(n int) string {
		if n == 0 {
			return "    "
		}
		return fmt.Sprintf("%4d", n)
	}
	mark := " "
	switch l.Kind {
	case diff.Add:
		mark = "+"
	case diff.Remove:
		mark = "-"
	}
	return num(l.OldNo) + " " + num(l.NewNo) + " │ " + mark + strings.ReplaceAll(l.Text, "\t", "    ")
}

func diffColor(k diff.Kind) fyne.ThemeColorName {
	switch k {
	case diff.Add:
		return theme.ColorNameSuccess
	case diff.Remove:
		return theme.ColorNameError
	}
	return theme.ColorNameForeground
}

func diffSegment(text string, color fyne.ThemeColorName) *widget.TextSegment {
	return &widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		ColorName: color, Inline: false, SizeName: theme.SizeNameText, TextStyle: fyne.TextStyle{Monospace: true}}}
}

// Ticked counts the ticked hunks.
func Ticked(ticks []bool) int {
	n := 0
	for _, t := range ticks {
		if t {
			n++
		}
	}
	return n
}
