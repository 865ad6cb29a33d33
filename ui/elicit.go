package ui

import (
	"fmt"
	"slices"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/ui/extensions"
	tw "github.com/tally-dev/tally/ui/widget"
)

// A form an MCP server asks for during a tool call (agent.EventForm)
// opens as a dialog (see extensions.FormDialog). A hidden session's form
// waits until the session is shown again; a form whose call ended closes
// (agent.EventFormDone).

// pendingForm is a form waiting for the user.
type pendingForm struct {
	req mcp.FormRequest
	dlg *extensions.FormDialog // its dialog once shown, nil before
}

// onForm handles a form event of live, shown or hidden.
func (u *UI) onForm(live *liveSession, e agent.Event) {
	if e.Form == nil {
		return
	}
	i := slices.IndexFunc(live.waits.forms, func(p *pendingForm) bool { return p.req.ID == e.Form.ID })
	switch e.Kind {
	case agent.EventForm:
		if i >= 0 {
			return
		}
		p := &pendingForm{req: *e.Form}
		live.waits.forms = append(live.waits.forms, p)
		u.sessions.badges()
		u.notify("A form waits", fmt.Sprintf("The MCP server %q asks you to fill in a form for %s.", p.req.Form.Server, u.sessions.title(live.id)), live)
		if u.live == live {
			u.showForm(live, p)
		}
	case agent.EventFormDone:
		if i < 0 {
			return
		}
		p := live.waits.forms[i]
		live.waits.forms = slices.Delete(live.waits.forms, i, i+1)
		u.sessions.badges()
		if p.dlg != nil {
			p.dlg.Close()
			if u.live == live && e.Reason == "withdrawn" {
				u.banner.ShowInfo(fmt.Sprintf("The form of the MCP server %q was withdrawn: its call ended before you answered.", p.req.Form.Server))
			}
		}
	}
}

// showForm opens p's dialog, once.
func (u *UI) showForm(live *liveSession, p *pendingForm) {
	if p.dlg != nil {
		return
	}
	p.dlg = extensions.NewFormDialog(p.req.Form, u.win, func(r mcp.Reply) { u.answerForm(live, p, r) })
	u.footer.State.Run = tw.Busy("waiting for you to fill in a form")
	u.footer.Update()
}

// answerForm sends the user's answer to p through the session.
func (u *UI) answerForm(live *liveSession, p *pendingForm, r mcp.Reply) {
	if i := slices.Index(live.waits.forms, p); i >= 0 {
		live.waits.forms = slices.Delete(live.waits.forms, i, i+1)
		u.sessions.badges()
	}
	if u.live == live && live.job.running {
		u.footer.State.Run = tw.Running(0, 0, "")
		u.footer.Update()
	}
	sess, id := live.sess, p.req.ID
	if sess == nil {
		return
	}
	u.bridge.Work(func() func() {
		err := sess.MCP().AnswerForm(id, r)
		if err == nil {
			return nil
		}
		return func() {
			if u.live == live {
				u.banner.ShowError("The form's answer could not be sent: " + tw.Sentence(err.Error()))
			}
		}
	})
}

// showWaitingForms opens the dialogs of live's forms that came while it
// was hidden.
func (u *UI) showWaitingForms(live *liveSession) {
	for _, p := range slices.Clone(live.waits.forms) {
		u.showForm(live, p)
	}
}
