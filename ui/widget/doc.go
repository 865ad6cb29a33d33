// Package widget holds Tally's display widgets and the formatting they
// share: the context gauge, the cache chip, the request chart, the
// checklist, the footer, the banner, diffs and Markdown for the chat, the
// run state the footer names, the theme, the text field that lets Escape
// close its dialog, the line that says what is wrong with a form in room
// it keeps, and a message's texts for people (one line of it, or the
// whole) with the colours of diagnostics.
//
// The widgets only display what they are given. None of them reads the
// engine or the store, starts a goroutine or calls fyne.Do, and nothing
// here imports package ui: the window (package ui) fetches the numbers
// and hands them over. Like every Fyne widget they must be used on the UI
// goroutine only.
package widget
