// Package extensions is the window's views of what extends the agent:
// MCP servers (the dialog that adds, tests, signs in to, enables and
// removes them, the sign-in dialog and the gauge's line about their tool
// schemas), the forms servers ask for during a call, the Hooks dialog
// with each hook's last run, and the review of what a workspace ships
// (MCP servers, hooks, skills) before the user trusts it.
//
// It never sees the window: the views get a Host of callbacks and what
// they list as functions. Reading and changing configuration, probing
// and signing in run off the UI goroutine through Host.Work; widgets are
// touched only on the UI goroutine, and the package never starts a
// goroutine or calls fyne.Do itself.
package extensions

import "fyne.io/fyne/v2"

// Host is what the views get from the window. Its functions are called
// on the UI goroutine, except Do.
type Host struct {
	// Window holds the dialogs.
	Window fyne.Window
	// Work runs work off the UI goroutine, then the function it returns
	// (if any) on the UI goroutine, in that order.
	Work func(work func() (apply func()))
	// Do runs a function on the UI goroutine; work running off it uses
	// Do to show what it learns before it returns.
	Do func(func())
	// Info and Error say msg in the window's banner.
	Info, Error func(msg string)
	// Copy puts text on the clipboard.
	Copy func(text string)
}
