package mcp

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/internal/text"
)

// This file answers a server's elicitation: a form the server asks the
// user to fill in during a tool call (MCP "elicitation/create", form
// mode). The request's schema becomes a [Form]; Options.Elicit asks the
// user and returns a [Reply], whose answers are checked against the form
// and completed with the defaults of the fields left out (SEP-1034)
// before they reach the server. A URL-mode request (a page the user is
// asked to open, see elicit_url.go) reaches the host as a Form with a URL.

// Kind is the type of a form's field.
type Kind string

// The kinds of field a form can have.
const (
	KindString  Kind = "string"  // free text, perhaps of a Format
	KindNumber  Kind = "number"  // any number
	KindInteger Kind = "integer" // a whole number
	KindBoolean Kind = "boolean" // yes or no
	KindChoice  Kind = "choice"  // one of Choices (a string enum)
	KindChoices Kind = "choices" // any of Choices (an array of a string enum)
)

// Choice is one value a choice field allows, with the title to show for
// it ("" shows the value).
type Choice struct {
	Value string `json:"value"`
	Title string `json:"title,omitempty"`
}

// Label is what to show for the choice: its title, else its value.
func (c Choice) Label() string {
	if c.Title != "" {
		return c.Title
	}
	return c.Value
}

// Field is one question of a form. Its values are typed by Kind: a string
// for KindString and KindChoice, a float64 for KindNumber, an int64 for
// KindInteger, a bool for KindBoolean and a []string for KindChoices.
type Field struct {
	// Name is the key the answer is sent under.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Title and Description are the server's words for the field; either
	// may be "".
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Required fields must be answered (or have a default).
	Required bool `json:"required,omitempty"`
	// Default is the value a field left out gets, nil when it has none; it
	// always passes the field's checks (a default that does not is
	// dropped).
	Default any `json:"default,omitempty"`
	// Choices are the values of a choice field, in the server's order.
	Choices []Choice `json:"choices,omitempty"`
	// Min and Max bound a number (inclusive), nil when unbounded.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// MinLength and MaxLength bound a text's characters, MinItems and
	// MaxItems the choices picked; nil when unbounded.
	MinLength *int `json:"min_length,omitempty"`
	MaxLength *int `json:"max_length,omitempty"`
	MinItems  *int `json:"min_items,omitempty"`
	MaxItems  *int `json:"max_items,omitempty"`
	// Format is the shape a text must have: "email", "uri", "date",
	// "date-time", or "" for any.
	Format string `json:"format,omitempty"`
}

// Label is what to call the field: its title, else its name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Form is a server's request for information from the user. Fields are
// sorted by name (the protocol's schema is a JSON object, whose order
// does not survive decoding); a form without fields asks only to accept
// or decline its message. A form with a URL asks the user to open a page
// instead (URL mode, see [Form.Page]).
type Form struct {
	// Server is the configured name of the server that asks.
	Server  string  `json:"server"`
	Message string  `json:"message"`
	Fields  []Field `json:"fields,omitempty"`
	// URL is the page a URL-mode request asks the user to open in their
	// browser, "" for a form; it is an https URL, or http on a loopback
	// address. ElicitationID is the server's name for the request.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitation_id,omitempty"`
}

// Clone returns a copy of f that shares no memory with it.
func (f Form) Clone() Form {
	c := f
	c.Fields = slices.Clone(f.Fields)
	for i, fd := range c.Fields {
		c.Fields[i].Choices = slices.Clone(fd.Choices)
		if d, ok := fd.Default.([]string); ok {
			c.Fields[i].Default = slices.Clone(d)
		}
		c.Fields[i].Min, c.Fields[i].Max = clonePtr(fd.Min), clonePtr(fd.Max)
		c.Fields[i].MinLength, c.Fields[i].MaxLength = clonePtr(fd.MinLength), clonePtr(fd.MaxLength)
		c.Fields[i].MinItems, c.Fields[i].MaxItems = clonePtr(fd.MinItems), clonePtr(fd.MaxItems)
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Action is what the user did with a form.
type Action string

// The answers to a form, as the protocol names them.
const (
	// ActionAccept sends the answers (Reply.Content).
	ActionAccept Action = "accept"
	// ActionDecline refuses to answer.
	ActionDecline Action = "decline"
	// ActionCancel dismisses the form without a choice (or the call it
	// belongs to ended).
	ActionCancel Action = "cancel"
)

// Reply is the answer to a form. Content holds an accepted form's answers
// by field name, typed as [Field] says; it is nil otherwise.
type Reply struct {
	Action  Action         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Declined and Cancelled are the replies without answers.
var (
	Declined  = Reply{Action: ActionDecline}
	Cancelled = Reply{Action: ActionCancel}
)

// Defaults returns the defaults of f's fields by name (fields without one
// are left out); the map is new.
func (f Form) Defaults() map[string]any {
	out := map[string]any{}
	for _, fd := range f.Fields {
		if fd.Default != nil {
			out[fd.Name] = cloneValue(fd.Default)
		}
	}
	return out
}

// Accept checks content against the form and returns the accepted reply:
// every answer converted to its field's type, and every field left out
// given its default. The error names the first answer that does not fit,
// or the first required field left without one, in one sentence.
func (f Form) Accept(content map[string]any) (Reply, error) {
	out := map[string]any{}
	byName := map[string]Field{}
	for _, fd := range f.Fields {
		byName[fd.Name] = fd
	}
	for _, name := range slices.Sorted(maps.Keys(content)) {
		fd, ok := byName[name]
		if !ok {
			return Reply{}, fmt.Errorf("the form has no field %q; answer only its fields", text.Clip(name, 60))
		}
		v := content[name]
		if v == nil {
			continue // left out
		}
		nv, err := fd.Normalize(v)
		if err != nil {
			return Reply{}, err
		}
		out[name] = nv
	}
	for _, fd := range f.Fields {
		if _, ok := out[fd.Name]; ok {
			continue
		}
		switch {
		case fd.Default != nil:
			out[fd.Name] = cloneValue(fd.Default)
		case fd.Required:
			return Reply{}, fmt.Errorf("%q is required; give it a value", fd.Label())
		}
	}
	return Reply{Action: ActionAccept, Content: out}, nil
}

// AcceptDefaults is Accept with no answers: every field takes its
// default. The error names the first required field without one.
func (f Form) AcceptDefaults() (Reply, error) {
	r, err := f.Accept(nil)
	if err != nil {
		for _, fd := range f.Fields {
			if fd.Required && fd.Default == nil {
				return Reply{}, fmt.Errorf("the form's field %q is required and has no default, so the defaults cannot answer it", fd.Label())
			}
		}
	}
	return r, err
}

// elicit answers the server's elicitation request (the SDK's
// ElicitationHandler). It never panics: a request Tally cannot show is
// refused with an error the server reads, and without Options.Elicit
// every form and page is declined.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (res *sdk.ElicitResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Note(fmt.Sprintf("a form request failed unexpectedly (%v); it was declined", p))
			res, err = &sdk.ElicitResult{Action: string(ActionDecline)}, nil
		}
	}()
	if req == nil || req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the elicitation request has no parameters"}
	}
	p := req.Params
	var f Form
	if p.Mode == "url" || (p.Mode == "" && (p.URL != "" || p.ElicitationID != "")) {
		f, err = parsePage(s.name, p)
	} else {
		f, err = parseForm(s.name, p.Message, p.RequestedSchema)
	}
	if err != nil {
		s.log.Note("refused a form request: " + err.Error())
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	ask := s.m.opts.Elicit
	if ask == nil {
		s.log.Note(fmt.Sprintf("declined the form %q: no one is there to fill it in", text.OneLine(f.Message, 80)))
		return &sdk.ElicitResult{Action: string(ActionDecline)}, nil
	}
	fctx, done := s.formContext(ctx)
	r, err := ask(fctx, f)
	done()
	switch {
	case err != nil && fctx.Err() != nil:
		s.log.Note("withdrew a form: its call ended before it was answered")
		return &sdk.ElicitResult{Action: string(ActionCancel)}, nil
	case err != nil:
		s.log.Note("declined a form: " + err.Error())
		return &sdk.ElicitResult{Action: string(ActionDecline)}, nil
	}
	switch r.Action {
	case ActionAccept:
		if f.Page() {
			// The user agreed to open the page; nothing else is sent.
			return &sdk.ElicitResult{Action: string(ActionAccept)}, nil
		}
		r, err = f.Accept(r.Content)
		if err != nil {
			// The host checks the answers first; one that slips through
			// never reaches the server unchecked.
			s.log.Note("declined a form whose answers do not fit it: " + err.Error())
			return &sdk.ElicitResult{Action: string(ActionDecline)}, nil
		}
		return &sdk.ElicitResult{Action: string(ActionAccept), Content: r.Content}, nil
	case ActionCancel:
		return &sdk.ElicitResult{Action: string(ActionCancel)}, nil
	}
	return &sdk.ElicitResult{Action: string(ActionDecline)}, nil
}
