package mcp

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/tally-dev/tally/internal/text"
)

// FormRequest is a form a server waits on: the form and the ID its answer
// names.
type FormRequest struct {
	ID   string `json:"id"`
	Form Form   `json:"form"`
}

// Forms routes the forms a session's servers ask for during a tool call
// to the host: each is told to Show, and waits for Answer or for its call
// to end. Its zero value is ready; it is safe for concurrent use.
type Forms struct {
	// Show is told a form that waits for an answer.
	Show func(FormRequest)
	// Done is told a form that no longer waits, and why: "accepted",
	// "declined", "cancelled" or "withdrawn" (its call ended).
	Done func(req FormRequest, reason string)

	mu      sync.Mutex
	next    int
	waiting map[string]*waitingForm
}

type waitingForm struct {
	form  Form
	reply chan Reply // buffered: answering never blocks
}

// Ask shows f to the host and waits for its answer. When ctx ends first
// (the call was stopped or ended) the form is withdrawn.
func (h *Forms) Ask(ctx context.Context, f Form) (Reply, error) {
	w := &waitingForm{form: f, reply: make(chan Reply, 1)}
	h.mu.Lock()
	if h.waiting == nil {
		h.waiting = map[string]*waitingForm{}
	}
	h.next++
	fid := "form-" + strconv.Itoa(h.next)
	h.waiting[fid] = w
	h.mu.Unlock()
	h.Show(FormRequest{ID: fid, Form: f.Clone()})
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
	h.Done(FormRequest{ID: fid, Form: f.Clone()}, "withdrawn")
	return Cancelled, ctx.Err()
}

// Answer answers the waiting form id: accept with the answers in
// r.Content (checked against the form, and the fields left out given
// their defaults), decline or cancel. An accepted answer that does not fit
// the form is refused with the reason in one sentence, and the form keeps
// waiting; so does a form whose ID is unknown (answered already, or its
// call ended) give an error.
func (h *Forms) Answer(id string, r Reply) error {
	h.mu.Lock()
	w := h.waiting[id]
	if w == nil {
		h.mu.Unlock()
		return fmt.Errorf("no form %q waits for an answer; it was answered already or its call ended", id)
	}
	switch r.Action {
	case ActionAccept:
		checked, err := w.form.Accept(r.Content)
		if err != nil {
			h.mu.Unlock()
			return err
		}
		r = checked
	case ActionDecline, ActionCancel:
		r.Content = nil
	default:
		h.mu.Unlock()
		return fmt.Errorf("%q is not an answer to a form; accept, decline or cancel it", text.Clip(string(r.Action), 40))
	}
	delete(h.waiting, id)
	h.mu.Unlock()
	w.reply <- r
	reason := map[Action]string{ActionAccept: "accepted", ActionDecline: "declined", ActionCancel: "cancelled"}[r.Action]
	h.Done(FormRequest{ID: id, Form: w.form.Clone()}, reason)
	return nil
}
