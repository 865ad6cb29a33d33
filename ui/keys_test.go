package ui

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// shiftEnter types Shift+Enter into the prompt, as the desktop driver
// delivers it: Shift goes down, then Enter is typed.
func shiftEnter(h *harness) {
	p := h.ui.input.prompt
	p.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	p.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	p.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	h.q.drain()
}

// pressTab presses Tab (Shift+Tab when back) on c as the desktop driver
// does: a focused widget that accepts Tab gets it as a key, otherwise the
// focus moves on (or back).
func pressTab(c fyne.Canvas, back bool) {
	if t, ok := c.Focused().(fyne.Tabbable); ok && t.AcceptsTab() {
		c.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyTab})
		return
	}
	if back {
		c.FocusPrevious()
	} else {
		c.FocusNext()
	}
}

// Enter in the prompt added a line instead of sending (issue 33 #6):
// Enter sends and Shift+Enter starts a new line; with "Enter sends" off,
// Enter starts a line and Ctrl+Enter sends, as it always does.
func TestEnterSendsAndShiftEnterStartsALine(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("one"), llmtest.Text("two")))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	p := h.ui.input.prompt
	h.win.Canvas().Focus(p)
	if h.ui.input.hint.Text != "Enter sends" {
		t.Errorf("the hint under Send says %q", h.ui.input.hint.Text)
	}
	test.Type(p, "first line")
	shiftEnter(h)
	test.Type(p, "second line")
	if p.Text != "first line\nsecond line" || h.ui.live.job.running {
		t.Fatalf("Shift+Enter: prompt %q, a turn started: %v", p.Text, h.ui.live.job.running)
	}
	p.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !h.ui.live.job.running || p.Text != "" {
		t.Fatalf("Enter did not send: prompt %q", p.Text)
	}
	h.waitIdle()

	h.ui.setEnterNewline(true)
	if h.ui.input.hint.Text != "Ctrl+Enter sends" {
		t.Errorf("with Enter starting lines the hint says %q", h.ui.input.hint.Text)
	}
	test.Type(p, "a")
	p.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	test.Type(p, "b")
	if p.Text != "a\nb" || h.ui.live.job.running {
		t.Fatalf("Enter with \"Enter sends\" off: prompt %q, a turn started: %v", p.Text, h.ui.live.job.running)
	}
	p.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault})
	if !h.ui.live.job.running {
		t.Fatal("Ctrl+Enter did not send")
	}
	h.waitIdle()
	h.waitFor("the choice to be saved", func() bool { return h.ui.wb.Settings().EnterNewline })
}

// Tab in the prompt typed a tab, so the keyboard could never leave it
// (issue 33 #6): Tab moves the focus on, Shift+Tab back.
func TestTabLeavesThePrompt(t *testing.T) {
	h := silentSession(t)
	c := h.win.Canvas()
	p := h.ui.input.prompt
	c.Focus(p)
	test.Type(p, "hello")
	pressTab(c, false)
	if p.Text != "hello" {
		t.Errorf("Tab changed the prompt to %q", p.Text)
	}
	if c.Focused() == p || c.Focused() == nil {
		t.Fatalf("Tab left the focus on %T", c.Focused())
	}
	pressTab(c, true)
	if c.Focused() != p {
		t.Errorf("Shift+Tab went to %T, not back to the prompt", c.Focused())
	}
	if strings.Contains(p.Text, "\t") {
		t.Errorf("a tab was typed: %q", p.Text)
	}
}

// There was no way to make the text larger (issue 33 #6): Ctrl+= and
// Ctrl+- scale the app's text at once, the chat's rows included, Ctrl+0
// resets it, and the scale is saved for the next start.
func TestTextScaleShortcuts(t *testing.T) {
	h := silentSession(t)
	h.win.Resize(fyne.NewSize(960, 600))
	base := theme.TextSize()
	h.ui.chat.AppendItems(&chat.Item{Kind: chat.ItemUser, Text: "a question", LogIndex: -1})
	settle := func() {
		h.q.drain()
		fynetest.LayoutAll(h.win.Canvas().Content())
		h.q.drain()
	}
	settle()
	rowH := h.ui.chat.List.Heights[0]
	title := h.ui.head.title.MinSize().Height
	ctrl := func(k fyne.KeyName) {
		h.ui.input.prompt.TypedShortcut(&desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault})
		settle()
	}
	near := func(a, b float32) bool { return math.Abs(float64(a-b)) < 0.01 }

	ctrl(fyne.KeyEqual)
	ctrl(fyne.KeyEqual)
	if got := theme.TextSize(); !near(got, base*1.25) {
		t.Fatalf("after Ctrl+= twice the text is %.2f; want %.2f", got, base*1.25)
	}
	if h.ui.head.title.MinSize().Height <= title {
		t.Error("the window's labels did not grow")
	}
	if you := textIn(h.win.Canvas().Content(), "You"); you == nil || !near(you.TextSize, base*1.25) {
		t.Errorf("the chat's \"You\" is drawn at %v; want %.2f", you, base*1.25)
	}
	if h.ui.chat.List.Heights[0] <= rowH {
		t.Errorf("the chat's row is still %.0f tall", h.ui.chat.List.Heights[0])
	}
	h.waitFor("the scale to be saved", func() bool { return h.ui.wb.Settings().TextScale == 1.25 })

	ctrl(fyne.KeyMinus)
	if got := theme.TextSize(); !near(got, base*1.1) {
		t.Errorf("after Ctrl+- the text is %.2f; want %.2f", got, base*1.1)
	}
	ctrl(fyne.Key0)
	if got := theme.TextSize(); !near(got, base) {
		t.Errorf("after Ctrl+0 the text is %.2f; want %.2f", got, base)
	}
	ctrl(fyne.KeyEqual)

	// The next start draws the text at the saved scale.
	h.ui.Close()
	w := test.NewTempWindow(t, widget.NewLabel(""))
	u := New(h.notes, w, newBridgeWith(h.q.post), Options{DataDir: h.dir, Env: func(string) string { return "" }})
	t.Cleanup(u.Close)
	h.waitFor("the window to open again", func() bool { return u.sessions != nil && h.q.empty() })
	if got := theme.TextSize(); !near(got, base*1.1) {
		t.Errorf("after a restart the text is %.2f; want %.2f", got, base*1.1)
	}
}

// F1 opened the keyboard sheet only while nothing had the focus, so not
// from the prompt box, where the keyboard usually is.
func TestF1FromThePromptOpensTheKeyboardSheet(t *testing.T) {
	h := silentSession(t)
	p := h.ui.input.prompt
	h.win.Canvas().Focus(p)
	p.TypedKey(&fyne.KeyEvent{Name: fyne.KeyF1})
	if !h.overlayShows("Keyboard and text size") || !h.overlayShows("Shift+Enter") {
		t.Error("F1 in the prompt did not open the keyboard sheet")
	}
	if p.Text != "" {
		t.Errorf("F1 typed %q", p.Text)
	}
}
