// Package chat is the conversation view of the window: a virtualized list
// of message rows and tool cards, with approvals, sub-agent cards, closed
// cycles, rewinds and image thumbnails. It owns its rows and widgets and
// touches them only on the UI goroutine; it gets what it needs from the
// window through callbacks (a function that runs work on the UI goroutine,
// the approval answer, the clipboard) and never starts goroutines itself.
package chat
