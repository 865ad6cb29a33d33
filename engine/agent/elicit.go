package agent

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
)

// This file routes the forms a session's MCP servers ask for during a tool
// call (MCP elicitation) to the user: each becomes an EventForm, and the
// host answers it through the front door, MCP.AnswerForm. A host that
// answers no forms (Config.Forms false) has every form declined at once.

// Form events. Like EventMCP they may arrive from a background goroutine
// (the server's connection), during a turn.
const (
	// EventForm says an MCP server asks the user to fill in a form; Form
	// holds it. The call waits until the host answers with
	// MCP.AnswerForm(Form.ID, …) or the call ends.
	EventForm EventKind = "form"
	// EventFormDone says the form Form.ID no longer waits: it was
	// answered, or withdrawn because its call ended; Reason says which
	// ("accepted", "declined", "cancelled" or "withdrawn"). A host
	// closes the form's dialog.
	EventFormDone EventKind = "form_done"
)

// FormRequest is a form an MCP server waits on: the form and the ID its
// answer names.
type FormRequest struct {
	ID   string   `json:"id"`
	Form mcp.Form `json:"form"`
}

// formHub holds the forms waiting for the host's answer.
type formHub struct {
	mu      sync.Mutex
	next    int
	waiting map[string]*waitingForm
}

type waitingForm struct {
	session string // the session's ID, for the events
	form    mcp.Form
	reply   chan mcp.Reply // buffered: answering never blocks
}

// formAsker is the session's mcp.Options.Elicit; id is the session's ID
// (the events it sends read nothing else of the session).
func (s *Session) formAsker(id string) func(context.Context, mcp.Form) (mcp.Reply, error) {
	return func(ctx context.Context, f mcp.Form) (mcp.Reply, error) { return s.askForm(ctx, id, f) }
}

// askForm shows f to the host and waits for its answer, or declines it at
// once when the host answers no forms. When ctx ends first (the call was
// stopped or ended) the form is withdrawn.
func (s *Session) askForm(ctx context.Context, id string, f mcp.Form) (mcp.Reply, error) {
	if !s.cfg.Forms {
		s.emitMCP(id, Event{Kind: EventMCP, Reason: fmt.Sprintf("the MCP server %q asked for a form (%q), but no one is there to fill it in, so it was declined",
			f.Server, text.OneLine(f.Message, 80))})
		return mcp.Declined, nil
	}
	h := &s.forms
	w := &waitingForm{session: id, form: f, reply: make(chan mcp.Reply, 1)}
	h.mu.Lock()
	if h.waiting == nil {
		h.waiting = map[string]*waitingForm{}
	}
	h.next++
	fid := "form-" + strconv.Itoa(h.next)
	h.waiting[fid] = w
	h.mu.Unlock()
	s.emitMCP(id, Event{Kind: EventForm, Form: &FormRequest{ID: fid, Form: f.Clone()}})
	select {
	case r := <-w.reply:
		return r, nil
	case <-ctx.Done():
	}
	h.mu.Lock()
	_, still := h.waiting[fid]
	delete(h.waiting, fid)
	h.mu.Unlock()
	if !still { // answered as the call ended
		return <-w.reply, nil
	}
	s.emitMCP(id, Event{Kind: EventFormDone, Form: &FormRequest{ID: fid, Form: f.Clone()}, Reason: "withdrawn"})
	return mcp.Cancelled, ctx.Err()
}

// AnswerForm answers the waiting form id: accept with the answers in
// r.Content (checked against the form, and the fields left out given
// their defaults), decline or cancel. An accepted answer that does not fit
// the form is refused with the reason in one sentence, and the form keeps
// waiting; so does a form whose ID is unknown (answered already, or its
// call ended) give an error. It never waits for a running turn and may be
// called from any goroutine.
func (h MCP) AnswerForm(id string, r mcp.Reply) error {
	s := h.s
	hub := &s.forms
	hub.mu.Lock()
	w := hub.waiting[id]
	if w == nil {
		hub.mu.Unlock()
		return fmt.Errorf("no form %q waits for an answer; it was answered already or its call ended", id)
	}
	switch r.Action {
	case mcp.ActionAccept:
		checked, err := w.form.Accept(r.Content)
		if err != nil {
			hub.mu.Unlock()
			return err
		}
		r = checked
	case mcp.ActionDecline, mcp.ActionCancel:
		r.Content = nil
	default:
		hub.mu.Unlock()
		return fmt.Errorf("%q is not an answer to a form; accept, decline or cancel it", text.Clip(string(r.Action), 40))
	}
	delete(hub.waiting, id)
	hub.mu.Unlock()
	w.reply <- r
	reason := map[mcp.Action]string{mcp.ActionAccept: "accepted", mcp.ActionDecline: "declined", mcp.ActionCancel: "cancelled"}[r.Action]
	s.emitMCP(w.session, Event{Kind: EventFormDone, Form: &FormRequest{ID: id, Form: w.form.Clone()}, Reason: reason})
	return nil
}
