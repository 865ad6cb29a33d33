package ui

import (
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// promptEntry is the multi-line message box. Enter sends and Shift+Enter
// starts a new line, unless EnterNewline is set (then Enter starts a new
// line); Ctrl+Enter (Cmd+Enter on macOS) always sends. Tab and Shift+Tab
// move the keyboard focus on and back, as in any other field, except while
// the completion list offers a choice to pick.
type promptEntry struct {
	widget.Entry
	onSend func()
	// EnterNewline makes Enter start a new line instead of sending.
	EnterNewline bool
	// takesTab reports whether Tab is the completion list's now.
	takesTab func() bool
	// onHelp opens the keyboard sheet: F1 reaches the window only while
	// nothing has the focus.
	onHelp func()
	shift  bool // a Shift key is down
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

// TypedKey gives the key to onKey first; F1 opens the keyboard sheet;
// Enter without Shift sends (unless EnterNewline is set); everything else
// goes to the entry.
func (e *promptEntry) TypedKey(k *fyne.KeyEvent) {
	if e.onKey != nil && e.onKey(k) {
		return
	}
	if k.Name == fyne.KeyF1 && e.onHelp != nil {
		e.onHelp()
		return
	}
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !e.EnterNewline && !e.shiftHeld() {
		if e.onSend != nil {
			e.onSend()
		}
		return
	}
	e.Entry.TypedKey(k)
}

// AcceptsTab implements fyne.Tabbable: the prompt takes Tab only while the
// completion list offers a choice (Tab picks it); otherwise the window
// moves the focus, so the keyboard can leave the prompt.
func (e *promptEntry) AcceptsTab() bool { return e.takesTab != nil && e.takesTab() }

// KeyDown implements desktop.Keyable, noting Shift for Shift+Enter.
func (e *promptEntry) KeyDown(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

// KeyUp implements desktop.Keyable.
func (e *promptEntry) KeyUp(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

// FocusLost implements fyne.Focusable; a Shift released elsewhere is not
// seen, so it is forgotten here.
func (e *promptEntry) FocusLost() {
	e.shift = false
	e.Entry.FocusLost()
}

// shiftHeld reports whether a Shift key is down: as the desktop driver
// knows it, or, under another driver, as the entry saw it go down.
func (e *promptEntry) shiftHeld() bool {
	if d, ok := fyne.CurrentApp().Driver().(desktop.Driver); ok {
		return d.CurrentKeyModifiers()&fyne.KeyModifierShift != 0
	}
	return e.shift
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
