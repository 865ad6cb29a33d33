package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
)

// trustReview is one review of what a workspace ships (its MCP file, its
// hooks, its skills) before the user trusts it.
type trustReview struct {
	title, note, body string
	button            string       // the trusting button's label
	trust             func() error // runs off the UI goroutine
	failed            string       // what the error banner says could not be done
	done              func()       // runs on the UI goroutine once trusted
}

// reviewTrust shows r's body under its note, and trusts on request.
func (u *UI) reviewTrust(r trustReview) {
	body := &widget.Entry{MultiLine: true, Wrapping: fyne.TextWrapWord, Text: r.body}
	body.TextStyle.Monospace = true
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Text: r.note}
	var d *dialog.CustomDialog
	trust := &widget.Button{Text: r.button, Importance: widget.HighImportance, OnTapped: func() {
		d.Hide()
		u.bridge.Work(func() func() {
			err := r.trust()
			return func() {
				if err != nil {
					u.banner.ShowError(r.failed + ": " + err.Error())
					return
				}
				r.done()
			}
		})
	}}
	d = dialog.NewCustomWithoutButtons(r.title, container.NewBorder(note, nil, nil, nil, container.NewScroll(body)), u.win)
	d.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Not now", OnTapped: func() { d.Hide() }}, trust})
	d.Resize(fyne.NewSize(min(760, u.win.Canvas().Size().Width-40), min(520, u.win.Canvas().Size().Height-40)))
	d.Show()
}

// shownSession is the session shown and its workspace; nil and "" when
// none is open.
func (u *UI) shownSession() (*agent.Session, string) {
	if u.live == nil || u.live.sess == nil {
		return nil, ""
	}
	return u.live.sess, u.live.info.workspace
}
