package extensions

import (
	"context"
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
)

// Signing in to a remote MCP server: the banner of a server that asks
// for it, and its row in Settings → MCP servers, have a Sign in button. The authorization page opens in the user's browser; a dialog
// shows its address (to copy, when no browser opened) until the sign-in
// ends; the shown session then connects the server again.

// SignIn signs in to server name, configured as sc, then connects it
// again in sess (nil: no session is shown) and calls done (on the UI
// goroutine) with the outcome.
func SignIn(h Host, sess *agent.Session, name string, sc mcp.ServerConfig, done func(error)) {
	ctx, cancel := context.WithTimeout(context.Background(), mcp.SignInWait)
	addr := &widget.Entry{Wrapping: fyne.TextWrapBreak, MultiLine: true}
	addr.SetPlaceHolder("Asking the server where to sign in…")
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Text: "Tally opens the sign-in page of " + name + " in your browser. " +
		"Finish there; this closes by itself. If no browser opened, copy the address below into one."}
	copyAddr := &widget.Button{Text: "Copy address", OnTapped: func() { h.Copy(addr.Text) }}
	d := dialog.NewCustomWithoutButtons("Sign in to "+name, container.NewVBox(note, addr), h.Window)
	d.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Cancel", OnTapped: cancel}, copyAddr})
	d.Resize(fyne.NewSize(min(620, h.Window.Canvas().Size().Width-40), 0))
	d.Show()
	h.Work(func() func() {
		defer cancel()
		_, err := workbench.SignInMCP(ctx, name, sc, func(url string) {
			h.Do(func() { addr.SetText(url) })
		})
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			err = errors.New("the sign-in was cancelled")
		}
		if err == nil && sess != nil {
			err = sess.MCP().Connect(context.Background(), name)
		}
		return func() {
			d.Hide()
			done(err)
		}
	})
}

// signInButtons are the Sign in (and, once signed in, Sign out) buttons
// of an HTTP server's row in the settings.
func (v *MCPServers) signInButtons(s workbench.MCPServer) []fyne.CanvasObject {
	name, sc := s.Name, s.Config
	in := &widget.Button{Text: "Sign in", OnTapped: func() {
		v.setStatus("Signing in to "+name+"…", false)
		sess, _ := v.m.Shown()
		SignIn(v.h, sess, name, sc, func(err error) {
			if err != nil {
				v.setStatus("Could not sign in to "+name+": "+err.Error(), true)
			} else {
				v.setStatus("Signed in to "+name+".", false)
			}
			v.reload()
		})
	}}
	if s.Status.State == mcp.StateSignIn || (!s.SignedIn && s.Status.State == mcp.StateFailed) {
		in.Importance = widget.HighImportance
	}
	out := []fyne.CanvasObject{in}
	if s.SignedIn {
		out = append(out, &widget.Button{Text: "Sign out", Importance: widget.LowImportance, OnTapped: func() {
			v.h.Work(func() func() {
				_, err := workbench.SignOutMCP(name, sc)
				return func() {
					if err != nil {
						v.setStatus("Could not sign out of "+name+": "+err.Error(), true)
					} else {
						v.setStatus("Signed out of "+name+"; sessions opened from now on ask you to sign in.", false)
					}
					v.reload()
				}
			})
		}})
	}
	return out
}
