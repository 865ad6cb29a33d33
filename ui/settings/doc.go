// Package settings is the window's Settings dialog: the endpoint, the
// model and its key, prices, compaction and cycles, the cache layout,
// what the agent may do, endpoint profiles, language servers (added,
// edited, disabled and removed in the user's lsp.json) and the theme,
// in sections listed on the dialog's left (see Sections).
//
// It never sees the window: what it needs comes in a Host of callbacks
// and values. Its widgets are touched only on the UI goroutine; slow work
// (a connection test, reading or writing the language-server file) goes
// through Host.Work, and the package never starts a goroutine or calls
// fyne.Do itself. The API key is never put into a widget. Save hands the
// settings the form describes to Host.Apply, which stores them.
package settings

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/workbench"
)

// Host is what the Settings dialog gets from the window. Its functions
// are called on the UI goroutine, except where they say otherwise.
type Host struct {
	// Window holds the dialog and the small edit dialogs it opens.
	Window fyne.Window
	// Work runs work off the UI goroutine, then the function it returns
	// (if any) on the UI goroutine, in that order.
	Work func(work func() (apply func()))
	// Show shows the dialog as the window's view, closing the one shown
	// before.
	Show func(dialog.Dialog)
	// Saved are the saved settings the form starts from.
	Saved workbench.Settings
	// Resolve merges the environment with s, as a session would see it.
	Resolve func(s workbench.Settings) workbench.Resolved
	// Session is the shown session, nil when none is.
	Session *Session
	// Shown reports whether a session is shown at all (one may be shown
	// before its engine session is open).
	Shown func() bool
	// OpenFile opens a local file (a language server's log) in the
	// desktop's viewer.
	OpenFile func(path string)
	// ShowMCP and ShowHooks open the MCP servers and the Hooks dialogs.
	ShowMCP, ShowHooks func()
	// PreviewFallback, when set, previews the fallback chain names under
	// the settings s: what a switch to each fallback costs.
	PreviewFallback func(s workbench.Settings, names []string) ([]workbench.FallbackStep, error)
	// Apply stores the settings Save accepted.
	Apply func(workbench.Settings)
}

// Session is what the settings show of the shown session.
type Session struct {
	// Model is the session's model, whose prices the forecasts use.
	Model string
	// Demo says the session is the demo, which runs no language server.
	Demo bool
	// Forecast returns the input cost of each "Keep the context under"
	// choice for the session; nil when there is none to forecast (the
	// demo).
	Forecast func() []rewrite.KeepOption
	// LanguageServers returns the states of the session's language
	// servers; it never waits.
	LanguageServers func() []lsp.ServerStatus
}
