package ui

import (
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// promptEntry is the multi-line message box; Ctrl+Enter (Cmd+Enter on
// macOS) sends.
type promptEntry struct {
	widget.Entry
	onSend func()
	// onShortcut runs the window's shortcut for cs and reports whether
	// there was one; the entry would otherwise swallow it.
	onShortcut func(cs *desktop.CustomShortcut) bool
	// onKey sees every key first and reports whether it took it (the
	// completion list's Up, Down, Enter, Tab and Escape).
	onKey func(k *fyne.KeyEvent) bool
	// onPaste sees a paste first and reports whether it took it (the
	// clipboard named image files, which it attached).
	onPaste func() bool
}

func newPromptEntry(onSend func()) *promptEntry {
	e := &promptEntry{onSend: onSend}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.SetPlaceHolder("Tell the agent what to do… (drop, paste or attach an image to show it)")
	e.SetMinRowsVisible(3)
	e.ExtendBaseWidget(e)
	return e
}

// TypedShortcut sends on Ctrl+Enter, gives a paste to onPaste first and
// passes everything else on.
func (e *promptEntry) TypedShortcut(s fyne.Shortcut) {
	if _, ok := s.(*fyne.ShortcutPaste); ok && e.onPaste != nil && e.onPaste() {
		return
	}
	if cs, ok := s.(*desktop.CustomShortcut); ok && isSendShortcut(cs) {
		if e.onSend != nil {
			e.onSend()
		}
		return
	}
	if cs, ok := s.(*desktop.CustomShortcut); ok && e.onShortcut != nil && e.onShortcut(cs) {
		return
	}
	e.Entry.TypedShortcut(s)
}

// TypedKey gives the key to onKey first, then to the entry.
func (e *promptEntry) TypedKey(k *fyne.KeyEvent) {
	if e.onKey != nil && e.onKey(k) {
		return
	}
	e.Entry.TypedKey(k)
}

func isSendShortcut(cs *desktop.CustomShortcut) bool {
	enter := cs.KeyName == fyne.KeyReturn || cs.KeyName == fyne.KeyEnter
	mod := cs.Modifier == fyne.KeyModifierControl || cs.Modifier == fyne.KeyModifierShortcutDefault
	return enter && mod
}

// FocusIn focuses the entry when it is on a canvas.
func (e *promptEntry) FocusIn() {
	if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil {
		c.Focus(e)
	}
}

// setDraft shows a restored draft with the cursor at its end, where the
// user goes on typing.
func (e *promptEntry) setDraft(text string) {
	e.SetText(text)
	e.setCursor(utf8.RuneCountInString(text))
}

// setCursor puts the cursor after the first n runes of the text.
func (e *promptEntry) setCursor(n int) {
	runes := []rune(e.Text)
	n = min(max(n, 0), len(runes))
	lines := strings.Split(string(runes[:n]), "\n")
	e.CursorRow = len(lines) - 1
	e.CursorColumn = utf8.RuneCountInString(lines[len(lines)-1])
	e.Refresh()
}
