package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/tool"
)

// Keyboard shortcuts: one table, registered on the window and honoured by
// the prompt box too (a focused text field would otherwise swallow them),
// and listed by the shortcuts sheet (F1 or Ctrl+/).

// shortcut is one keyboard shortcut of the window.
type shortcut struct {
	key  fyne.KeyName
	mod  fyne.KeyModifier
	keys string // as shown in the sheet; "" for another key of the row above, not listed
	what string
	run  func(u *UI)
}

// shortcuts is the window's table, in the order the sheet lists them.
func shortcuts() []shortcut {
	return []shortcut{
		{fyne.KeyN, fyne.KeyModifierShortcutDefault, "Ctrl+N", "New session", func(u *UI) { u.sessions.showNew() }},
		{fyne.KeyReturn, fyne.KeyModifierShortcutDefault, "Ctrl+Enter", "Send the prompt, whatever Enter does", func(u *UI) { u.send() }},
		{fyne.KeyPeriod, fyne.KeyModifierShortcutDefault, "Ctrl+.", "Stop the running turn", func(u *UI) { u.stop() }},
		{fyne.KeyY, fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift, "Ctrl+Shift+Y", "Approve the call waiting for you", func(u *UI) { u.decideWaiting(true) }},
		{fyne.KeyN, fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift, "Ctrl+Shift+N", "Deny the call waiting for you", func(u *UI) { u.decideWaiting(false) }},
		{fyne.KeyK, fyne.KeyModifierShortcutDefault, "Ctrl+K", "Search every session", func(u *UI) { u.showSearch() }},
		{fyne.KeyF, fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift, "Ctrl+Shift+F", "The fleet: every session running, waiting or done", func(u *UI) { u.fleet.Show() }},
		{fyne.KeyComma, fyne.KeyModifierShortcutDefault, "Ctrl+,", "Settings", func(u *UI) { u.showSettings() }},
		{fyne.KeyB, fyne.KeyModifierShortcutDefault, "Ctrl+B", "Show or hide the session list", func(u *UI) { u.panels.toggleLeft() }},
		{fyne.KeyJ, fyne.KeyModifierShortcutDefault, "Ctrl+J", "Show or hide the side panel", func(u *UI) { u.panels.toggleRight() }},
		{fyne.KeyEqual, fyne.KeyModifierShortcutDefault, "Ctrl+=  or  Ctrl++", "Larger text", func(u *UI) { u.zoomText(true) }},
		{fyne.KeyEqual, fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift, "", "", func(u *UI) { u.zoomText(true) }},
		{fyne.KeyPlus, fyne.KeyModifierShortcutDefault, "", "", func(u *UI) { u.zoomText(true) }},
		{fyne.KeyMinus, fyne.KeyModifierShortcutDefault, "Ctrl+-", "Smaller text", func(u *UI) { u.zoomText(false) }},
		{fyne.Key0, fyne.KeyModifierShortcutDefault, "Ctrl+0", "Text at its normal size", func(u *UI) { u.setTextScale(1) }},
		{fyne.KeySlash, fyne.KeyModifierShortcutDefault, "Ctrl+/  or  F1", "This list of shortcuts", func(u *UI) { u.showShortcuts() }},
	}
}

// installShortcuts registers the table on the window's canvas and routes
// the prompt's unknown shortcuts through it.
func (u *UI) installShortcuts() {
	c := u.win.Canvas()
	for _, s := range shortcuts() {
		sc := s
		c.AddShortcut(&desktop.CustomShortcut{KeyName: sc.key, Modifier: sc.mod}, func(fyne.Shortcut) { sc.run(u) })
	}
	c.SetOnTypedKey(u.windowKey)
	// The chat, when it has the keyboard, scrolls for the keys it knows
	// and passes the others on, as the window would get them unfocused.
	u.chat.List.OnKey = func(ev *fyne.KeyEvent) {
		if !u.chat.Key(ev) {
			u.windowKey(ev)
		}
	}
	u.input.prompt.onShortcut, u.input.prompt.onHelp = u.runShortcut, u.showShortcuts
}

// windowKey handles a key typed with nothing focused that takes it: F1
// opens the shortcuts sheet, Escape closes the dialog on top.
func (u *UI) windowKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyF1:
		u.showShortcuts()
	case fyne.KeyEscape:
		u.onEscape()
	}
}

// runShortcut runs the table's entry for cs; it reports false when cs is
// not one of the window's shortcuts.
func (u *UI) runShortcut(cs *desktop.CustomShortcut) bool {
	for _, s := range shortcuts() {
		if s.key == cs.KeyName && sameModifier(s.mod, cs.Modifier) {
			s.run(u)
			return true
		}
	}
	return false
}

// sameModifier compares modifiers, taking the platform's shortcut key
// (Ctrl, or Cmd on macOS) for KeyModifierShortcutDefault.
func sameModifier(want, got fyne.KeyModifier) bool {
	norm := func(m fyne.KeyModifier) fyne.KeyModifier {
		if m&fyne.KeyModifierShortcutDefault != 0 {
			m = m&^fyne.KeyModifierShortcutDefault | fyne.KeyModifierControl
		}
		if m&fyne.KeyModifierSuper != 0 && fyne.KeyModifierShortcutDefault == fyne.KeyModifierSuper {
			m = m&^fyne.KeyModifierSuper | fyne.KeyModifierControl
		}
		return m
	}
	return norm(want) == norm(got)
}

// decideWaiting answers the call of the shown session that waits for the
// user, as its card's Approve or Deny would.
func (u *UI) decideWaiting(approve bool) {
	if u.live == nil || len(u.live.waits.approvals) == 0 {
		return
	}
	it := u.chat.ByCall[u.live.waits.approvals[0].Req.CallID]
	if it == nil || it.Approval == nil {
		return
	}
	d := tool.Deny
	if approve {
		d = tool.Approve
	}
	u.decide(it, d)
}

// showShortcuts opens the shortcuts sheet, with the keyboard's
// preferences (what Enter does, the text size) above the list.
func (u *UI) showShortcuts() {
	var rows []fyne.CanvasObject
	row := func(keys, what string) {
		rows = append(rows, &widget.Label{Text: keys, TextStyle: fyne.TextStyle{Bold: true, Monospace: true}}, widget.NewLabel(what))
	}
	if u.settings.EnterNewline {
		row("Enter", "A new line in the prompt (Ctrl+Enter sends)")
	} else {
		row("Enter", "Send the prompt")
		row("Shift+Enter", "A new line in the prompt")
	}
	for _, s := range shortcuts() {
		if s.keys != "" {
			row(s.keys, s.what)
		}
	}
	row("Tab  Shift+Tab", "Move to the next or the previous control, from the prompt too")
	row("Esc", "Close the dialog on top")
	row("↑ ↓ PgUp PgDn Home End", "Scroll the chat, once clicked (typing goes to the prompt)")
	grid := container.NewGridWithColumns(2, rows...)
	d := dialog.NewCustom("Keyboard and text size", "Close", container.NewBorder(u.preferencesView(), nil, nil, nil, container.NewVScroll(grid)), u.win)
	u.showView(d)
	// The list scrolls where the window is too short for all of it.
	whole := d.MinSize().Add(fyne.NewSize(0, grid.MinSize().Height))
	d.Resize(whole.Min(u.win.Canvas().Size().Subtract(fyne.NewSize(2*sheetMargin, 2*sheetMargin))).Max(d.MinSize()))
}

// sheetMargin is the least room the keyboard sheet leaves around it.
const sheetMargin = 24
