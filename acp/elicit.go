package acp

import (
	"bytes"
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
)

// This file passes the forms MCP servers ask for during a tool call to
// the client as ACP elicitation/create requests in form mode, and the
// pages they ask to be opened in URL mode, scoped to the session, where
// the client advertised that mode; otherwise they are declined. A form
// withdrawn because its call ended cancels its request
// ($/cancel_request).

// offered reports whether the client takes form elicitations, and
// whether it takes URL-mode ones (pages).
func (s *Server) offered() (forms, pages bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.client.Elicitation
	return e != nil && e.Form != nil, e != nil && e.Url != nil
}

// form handles EventForm (ask the client) and EventFormDone (a withdrawn
// form's request is cancelled).
func (st *session) form(e agent.Event) {
	if e.Form == nil {
		return
	}
	req := *e.Form
	if e.Kind == agent.EventFormDone {
		st.mu.Lock()
		cancel := st.forms[req.ID]
		delete(st.forms, req.ID)
		st.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.mu.Lock()
	if st.forms == nil {
		st.forms = map[string]context.CancelFunc{}
	}
	st.forms[req.ID] = cancel
	st.mu.Unlock()
	go func() { // the event's goroutine must not wait
		defer cancel()
		reply := st.askForm(ctx, req.Form)
		st.mu.Lock()
		delete(st.forms, req.ID)
		st.mu.Unlock()
		if err := st.sess.MCP().AnswerForm(req.ID, reply); err != nil && reply.Action == mcp.ActionAccept {
			// The answers do not fit the form: say why, and decline it.
			st.srv.logf("session %s: the answers to the form of the MCP server %q were refused (%s), so it was declined", st.id, req.Form.Server, sentence(err.Error()))
			_ = st.sess.MCP().AnswerForm(req.ID, mcp.Declined)
		}
	}()
}

// askForm sends f to the client and returns its answer; a failed or
// cancelled request is a cancelled form.
func (st *session) askForm(ctx context.Context, f mcp.Form) mcp.Reply {
	msg := "The MCP server \"" + f.Server + "\" asks: " + f.Message
	meta := map[string]any{scopeKey: map[string]any{"sessionId": st.sessionID()}}
	req := acp.UnstableCreateElicitationRequest{Form: &acp.UnstableCreateElicitationForm{
		Message: msg, Mode: "form", RequestedSchema: formSchema(f), Meta: meta,
	}}
	forms, pages := st.srv.offered()
	offered, what := forms, "form"
	if f.Page() {
		// A page the server asks to be opened goes to the client as a
		// URL-mode elicitation, its ID scoped to the session.
		req = acp.UnstableCreateElicitationRequest{Url: &acp.UnstableCreateElicitationUrl{
			Message: msg, Mode: "url", Url: f.URL, ElicitationId: acp.UnstableElicitationId(st.sessionID() + "/" + f.ElicitationID), Meta: meta,
		}}
		offered, what = pages, "page to open"
	}
	if !offered {
		st.srv.logf("session %s: the MCP server %q asks for what the client does not take (a %s), so it was declined", st.id, f.Server, what)
		return mcp.Declined
	}
	resp, err := st.srv.conn.UnstableCreateElicitation(ctx, req)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			st.srv.logf("session %s: the client did not answer the form of the MCP server %q (%s), so it was cancelled", st.id, f.Server, sentence(err.Error()))
		}
		return mcp.Cancelled
	case resp.Accept != nil:
		return mcp.Reply{Action: mcp.ActionAccept, Content: resp.Accept.Content}
	case resp.Decline != nil:
		return mcp.Declined
	}
	return mcp.Cancelled
}

// formSchema is a form as the restricted JSON Schema of an elicitation:
// an object of primitive properties.
func formSchema(f mcp.Form) acp.UnstableElicitationSchema {
	props := map[string]any{}
	var required []string
	for _, fd := range f.Fields {
		p := map[string]any{}
		if fd.Title != "" {
			p["title"] = fd.Title
		}
		if fd.Description != "" {
			p["description"] = fd.Description
		}
		if fd.Default != nil {
			p["default"] = fd.Default
		}
		switch fd.Kind {
		case mcp.KindChoice:
			p["type"] = "string"
			p["oneOf"] = enumOptions(fd.Choices)
		case mcp.KindChoices:
			p["type"] = "array"
			p["items"] = map[string]any{"anyOf": enumOptions(fd.Choices)}
			setInt(p, "minItems", fd.MinItems)
			setInt(p, "maxItems", fd.MaxItems)
		case mcp.KindNumber, mcp.KindInteger:
			p["type"] = string(fd.Kind)
			if fd.Min != nil {
				p["minimum"] = *fd.Min
			}
			if fd.Max != nil {
				p["maximum"] = *fd.Max
			}
		case mcp.KindBoolean:
			p["type"] = "boolean"
		default:
			p["type"] = "string"
			setInt(p, "minLength", fd.MinLength)
			setInt(p, "maxLength", fd.MaxLength)
			if fd.Format != "" {
				p["format"] = fd.Format
			}
		}
		props[fd.Name] = p
		if fd.Required {
			required = append(required, fd.Name)
		}
	}
	return acp.UnstableElicitationSchema{Type: "object", Properties: props, Required: required}
}

func enumOptions(cs []mcp.Choice) []map[string]any {
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		out = append(out, map[string]any{"const": c.Value, "title": c.Label()})
	}
	return out
}

func setInt(p map[string]any, key string, v *int) {
	if v != nil {
		p[key] = *v
	}
}

// scopeKey carries an elicitation's scope (its sessionId) in _meta,
// because the Go SDK's request type has no field for it; the connection's
// writer moves it to where the protocol puts it (see scoped).
const scopeKey = "tally/scope"

// scoped is an outgoing elicitation/create line with the scope carried in
// _meta moved to the params, or line itself when it has none.
func scoped(line []byte) []byte {
	if !bytes.Contains(line, []byte(scopeKey)) {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || method != acp.ClientMethodElicitationCreate {
		return line
	}
	var params map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["_meta"], &meta) != nil {
		return line
	}
	var scope map[string]json.RawMessage
	if json.Unmarshal(meta[scopeKey], &scope) != nil {
		return line
	}
	for k, v := range scope {
		params[k] = v
	}
	delete(meta, scopeKey)
	if len(meta) == 0 {
		delete(params, "_meta")
	} else if b, err := json.Marshal(meta); err == nil {
		params["_meta"] = b
	}
	b, err := json.Marshal(params)
	if err != nil {
		return line
	}
	msg["params"] = b
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(out, '\n')
}
