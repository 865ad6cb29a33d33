package extensions

import (
	"fmt"
	"net/url"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/mcp"
)

// openURL opens a page in the user's browser (replaced in tests).
var openURL = func(u *url.URL) error { return fyne.CurrentApp().OpenURL(u) }

// page shows a server's request to open a page in the browser (URL
// mode): its message, the whole URL and, apart, its host, which the user
// should check. Nothing opens until the user clicks "Open in browser",
// which opens the page and accepts; Decline and Cancel (also Escape)
// answer without opening it.
func (d *FormDialog) page(win fyne.Window) *FormDialog {
	f := d.form
	host := &widget.Label{Text: "Host: " + f.Host(), TextStyle: fyne.TextStyle{Bold: true}, Wrapping: fyne.TextWrapBreak}
	link := &widget.Label{Text: f.URL, TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak, Selectable: true}
	body := container.NewVBox(heading(f, "to open a page in your browser")...)
	body.Add(widget.NewSeparator())
	body.Add(host)
	body.Add(link)
	body.Add(&widget.Label{Text: "Check the host before you open it. What you do on that page does not pass through Tally or the model.", Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance})
	d.show(win, "Page from ", body, &widget.Button{Text: "Open in browser", Icon: theme.ComputerIcon(), Importance: widget.HighImportance, OnTapped: func() {
		u, err := url.Parse(f.URL)
		if err == nil {
			err = openURL(u)
		}
		if err != nil {
			d.problem.SetText(fmt.Sprintf("The browser could not be opened (%v); copy the address above into it, or decline.", err))
			d.problem.Show()
			return
		}
		d.finish(mcp.Reply{Action: mcp.ActionAccept})
	}})
	return d
}
