package widget

import (
	"strings"
	"testing"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// Inline code used to break one character per line when a segment began
// near the end of a line, and spaces next to inline code were lost (issue
// 12 #4). Every width wraps by words and keeps the spaces.
func TestInlineCodeWrapsByWordsAndKeepsSpaces(t *testing.T) {
	test.NewTempApp(t)
	const md = "The functions `Add` and `Mul` live in `calc/calc.go`, next to `Sub`.\n\n- use `go test ./...` to check\n\n```\ncode block stays\n```"
	for _, w := range []float32{1080, 600, 300, 120} {
		rt := widget.NewRichText(ParseMarkdown(md)...)
		rt.Wrapping = fyne.TextWrapWord
		rt.Resize(fyne.NewSize(w, 600))
		var pieces []string
		fynetest.Walk(rt, func(o fyne.CanvasObject) bool {
			if tx, ok := o.(*canvas.Text); ok {
				pieces = append(pieces, tx.Text)
				if r := []rune(strings.TrimSpace(tx.Text)); len(r) == 1 && unicode.IsLetter(r[0]) {
					t.Errorf("width %.0f: a line holds the single letter %q: %q", w, tx.Text, pieces)
				}
			}
			return true
		})
		joined := strings.Join(strings.Fields(strings.Join(pieces, " ")), " ")
		for _, want := range []string{"`Add` and `Mul`", "next to `Sub`.", "code block stays"} {
			if !strings.Contains(joined, want) {
				t.Errorf("width %.0f: %q missing from %q", w, want, joined)
			}
		}
	}
	if got := widget.NewRichText(ParseMarkdown("Add `x` and `y`")...).String(); !strings.Contains(got, "`x` and `y`") {
		t.Errorf("spaces around inline code lost: %q", got)
	}
	if got := widget.NewRichText(ParseMarkdown("it subtracted (`return a - b`).")...).String(); !strings.Contains(got, "(`return a - b`).") {
		t.Errorf("a space crept in after the bracket: %q", got)
	}
}
