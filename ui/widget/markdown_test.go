package widget

import (
	"strings"
	"testing"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// shown lays m out at width and returns every text it draws, with the
// canvas objects drawn.
func shown(t *testing.T, md string, width float32) (*Markdown, []*canvas.Text, []fyne.CanvasObject) {
	t.Helper()
	m := NewMarkdown(ParseDoc(md))
	w := test.NewTempWindow(t, m)
	w.Resize(fyne.NewSize(width+8, 800))
	m.Resize(fyne.NewSize(width, m.MinSize().Height))
	fynetest.LayoutAll(w.Canvas().Content())
	var texts []*canvas.Text
	var all []fyne.CanvasObject
	fynetest.Walk(m, func(o fyne.CanvasObject) bool {
		all = append(all, o)
		if tx, ok := o.(*canvas.Text); ok && tx.Text != "" {
			texts = append(texts, tx)
		}
		return true
	})
	return m, texts, all
}

// join is the drawn words in reading order.
func join(texts []*canvas.Text) string {
	var s []string
	for _, t := range texts {
		s = append(s, t.Text)
	}
	return strings.Join(s, " ")
}

// Inline code wraps by words at every width, keeps no backticks, and
// bold and italic survive in the same paragraph.
func TestInlineCodeAndEmphasis(t *testing.T) {
	test.NewTempApp(t)
	const md = "The functions `Add` and **Mul** live in `calc/calc.go`, next to *Sub*.\n\n- use `go test ./...` to check"
	for _, w := range []float32{1080, 600, 300, 120} {
		_, texts, _ := shown(t, md, w)
		got := join(texts)
		if strings.Contains(got, "`") {
			t.Errorf("width %.0f: backticks shown: %q", w, got)
		}
		for _, want := range []string{"Add", "calc/calc.go ,", "go", "test", "./..."} {
			if !strings.Contains(got, want) {
				t.Errorf("width %.0f: %q missing from %q", w, want, got)
			}
		}
		styles := map[string]fyne.TextStyle{}
		ys := map[string]float32{}
		for _, tx := range texts {
			for _, f := range strings.Fields(tx.Text) { // words of one style are drawn together
				if _, ok := ys[f]; !ok {
					ys[f], styles[f] = tx.Position().Y, tx.TextStyle
				}
			}
			if r := []rune(tx.Text); len(r) == 1 && unicode.IsLetter(r[0]) {
				t.Errorf("width %.0f: a piece holds the single letter %q", w, tx.Text)
			}
		}
		if d := ys["calc/calc.go"] - ys[","]; d > 4 || d < -4 {
			t.Errorf("width %.0f: the comma after code went to another line", w)
		}
		if !styles["Add"].Monospace || !styles["Mul"].Bold || !styles["Sub"].Italic || styles["live"] != (fyne.TextStyle{}) {
			t.Errorf("width %.0f: styles lost: Add %+v, Mul %+v, Sub %+v", w, styles["Add"], styles["Mul"], styles["Sub"])
		}
	}
}

// A table is drawn as aligned columns, not as a line of pipes.
func TestTableColumnsAlign(t *testing.T) {
	test.NewTempApp(t)
	const md = "| Name | Tokens | Note |\n|:-----|-------:|------|\n| summary | 1,200 | kept |\n| tool results | 84,000 | cleared by the micro layer |\n"
	m, texts, _ := shown(t, md, 700)
	if strings.Contains(join(texts), "|") {
		t.Fatalf("pipes drawn: %q", join(texts))
	}
	pos := map[string]fyne.Position{}
	for _, tx := range texts {
		p := fyne.CurrentApp().Driver().AbsolutePositionForObject(tx)
		if f := strings.Fields(tx.Text); len(f) > 0 {
			if _, ok := pos[f[0]]; !ok {
				pos[f[0]] = p // a cell's first word
			}
		}
	}
	if pos["Name"].X != pos["summary"].X || pos["summary"].X != pos["tool"].X {
		t.Errorf("the first column does not line up: %v %v %v", pos["Name"], pos["summary"], pos["tool"])
	}
	if pos["summary"].Y <= pos["Name"].Y || pos["tool"].Y <= pos["summary"].Y {
		t.Errorf("rows are not below each other: %v %v %v", pos["Name"], pos["summary"], pos["tool"])
	}
	// The Tokens column is right-aligned: its numbers end together.
	end := func(s string) float32 { return pos[s].X + fyne.MeasureText(s, 14, fyne.TextStyle{}).Width }
	if d := end("1,200") - end("84,000"); d > 1 || d < -1 {
		t.Errorf("right-aligned cells end %.1f px apart", d)
	}
	if pos["Note"].X <= end("84,000") {
		t.Errorf("the Note column starts inside the Tokens column")
	}
	if !strings.Contains(m.PlainText(), "summary\t1,200\tkept") {
		t.Errorf("plain text: %q", m.PlainText())
	}
}

// A code block sits on a background of its own.
func TestCodeBlockHasBackground(t *testing.T) {
	test.NewTempApp(t)
	_, _, all := shown(t, "Run:\n\n```go\nfunc Add(a, b int) int { return a + b }\n```\n", 600)
	found := false
	for _, o := range all {
		if r, ok := o.(*canvas.Rectangle); ok && r.FillColor == codeBackground() && r.Size().Height > 10 {
			found = true
		}
	}
	if !found {
		t.Error("no background behind the code block")
	}
}

// A line of plain words is drawn as one text on a whole unit, so the font
// spaces its words evenly and none is drawn lighter at a fractional
// position (answers read with uneven gaps when each word was its own
// text).
func TestPlainWordsAreDrawnTogether(t *testing.T) {
	test.NewTempApp(t)
	_, texts, _ := shown(t, "Only the test calls it, and the test expects a sum. Fixing **the operator**:", 1000)
	var got []string
	for _, tx := range texts {
		got = append(got, tx.Text)
		if p := tx.Position(); p.X != float32(int(p.X)) || p.Y != float32(int(p.Y)) {
			t.Errorf("%q is drawn at %v, between units", tx.Text, p)
		}
	}
	if want := []string{"Only the test calls it, and the test expects a sum. Fixing", "the operator", ":"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("texts %q, want %q", got, want)
	}
}
