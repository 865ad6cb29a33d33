package extensions

import (
	"fmt"
	"net/url"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
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
	body := container.NewVBox(
		&widget.Label{Text: fmt.Sprintf("The MCP server %q asks you to open a page in your browser during a tool call:", text.Clip(f.Server, 60)), Wrapping: fyne.TextWrapWord},
		&widget.Label{Text: f.Message, Wrapping: fyne.TextWrapWord, TextStyle: fyne.TextStyle{Bold: true}},
		widget.NewSeparator(),
		host,
		link,
		&widget.Label{Text: "Check the host before you open it. What you do on that page does not pass through Tally or the model.", Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance},
	)
	d.problem = &widget.Label{Importance: widget.DangerImportance, Wrapping: fyne.TextWrapWord}
	d.problem.Hide()
	d.accept = &widget.Button{Text: "Open in browser", Icon: theme.ComputerIcon(), Importance: widget.HighImportance, OnTapped: func() {
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
	}}
	decline := &widget.Button{Text: "Decline", Icon: theme.CancelIcon(), OnTapped: func() { d.finish(mcp.Declined) }}
	cancel := &widget.Button{Text: "Cancel", OnTapped: func() { d.finish(mcp.Cancelled) }}
	d.dlg = dialog.NewCustomWithoutButtons("Page from "+text.Clip(f.Server, 60), container.NewBorder(nil, d.problem, nil, nil, container.NewVScroll(body)), win)
	d.dlg.SetButtons([]fyne.CanvasObject{cancel, decline, d.accept})
	d.dlg.SetOnClosed(func() { d.finish(mcp.Cancelled) })
	size := win.Canvas().Size()
	d.dlg.Resize(fyne.NewSize(min(600, size.Width-40), min(body.MinSize().Height+160, size.Height-60)))
	d.dlg.Show()
	return d
}
