package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/tally-dev/tally/internal/text"
)

// Bounds on what a form may hold, so a server cannot flood the window or
// the terminal.
const (
	maxFields      = 50
	maxChoices     = 200
	maxMessage     = 4000 // characters
	maxFieldText   = 1000 // a title or description, in characters
	maxChoiceTitle = 200
)

// formSchema is the requested schema of a form: a flat object.
type formSchema struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// propSchema is one property of a form's schema, as the protocol allows
// it: a primitive, a string enum (plain, with enumNames, or titled with
// oneOf/anyOf of const and title) or an array of such an enum.
type propSchema struct {
	Type        json.RawMessage `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Default     json.RawMessage `json:"default"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []titledValue   `json:"oneOf"`
	AnyOf       []titledValue   `json:"anyOf"`
	Items       *itemsSchema    `json:"items"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
}

// itemsSchema is the items of a multiple-choice property.
type itemsSchema struct {
	Type  string        `json:"type"`
	Enum  []any         `json:"enum"`
	OneOf []titledValue `json:"oneOf"`
	AnyOf []titledValue `json:"anyOf"`
}

// titledValue is one entry of a titled enum (SEP-1330).
type titledValue struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// parseForm turns an elicitation request's message and schema into a
// form. The error says, in one sentence, why the form cannot be shown.
func parseForm(server, message string, schema any) (Form, error) {
	f := Form{Server: server, Message: text.Clip(message, maxMessage)}
	if schema == nil {
		return f, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return Form{}, fmt.Errorf("the form's schema is not JSON (%w)", err)
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return f, nil
	}
	var fs formSchema
	if err := json.Unmarshal(raw, &fs); err != nil {
		return Form{}, fmt.Errorf("the form's schema is not a JSON object of properties (%s)", text.OneLine(err.Error(), 200))
	}
	if fs.Type != "" && fs.Type != "object" {
		return Form{}, fmt.Errorf("the form's schema has type %q where an object is needed", text.Clip(fs.Type, 40))
	}
	if len(fs.Properties) > maxFields {
		return Form{}, fmt.Errorf("the form has %d fields, more than the %d Tally shows", len(fs.Properties), maxFields)
	}
	for _, name := range slices.Sorted(maps.Keys(fs.Properties)) {
		fd, err := parseField(name, fs.Properties[name])
		if err != nil {
			return Form{}, err
		}
		fd.Required = slices.Contains(fs.Required, name)
		f.Fields = append(f.Fields, fd)
	}
	return f, nil
}

// parseField turns one property into a field.
func parseField(name string, raw json.RawMessage) (Field, error) {
	shown := text.Clip(name, 60)
	var p propSchema
	if err := json.Unmarshal(raw, &p); err != nil {
		return Field{}, fmt.Errorf("the form's field %q is malformed (%s)", shown, text.OneLine(err.Error(), 200))
	}
	typ, err := schemaType(p.Type)
	if err != nil {
		return Field{}, fmt.Errorf("the form's field %q %w", shown, err)
	}
	fd := Field{
		Name: name, Title: text.Clip(p.Title, maxFieldText), Description: text.Clip(p.Description, maxFieldText),
		Min: p.Minimum, Max: p.Maximum, MinLength: p.MinLength, MaxLength: p.MaxLength,
		MinItems: p.MinItems, MaxItems: p.MaxItems,
	}
	switch {
	case typ == "array":
		if p.Items == nil {
			return Field{}, fmt.Errorf("the form's field %q is a list without items; Tally shows only lists of choices", shown)
		}
		fd.Kind = KindChoices
		fd.Choices, err = choices(p.Items.Enum, nil, append(p.Items.OneOf, p.Items.AnyOf...))
	case len(p.Enum) > 0 || len(p.OneOf) > 0 || len(p.AnyOf) > 0:
		if typ != "" && typ != "string" {
			return Field{}, fmt.Errorf("the form's field %q has choices of type %q; only text choices are allowed", shown, typ)
		}
		fd.Kind = KindChoice
		fd.Choices, err = choices(p.Enum, p.EnumNames, append(p.OneOf, p.AnyOf...))
	case typ == "string" || typ == "":
		fd.Kind = KindString
		switch p.Format {
		case "", "email", "uri", "date", "date-time":
			fd.Format = p.Format
		}
	case typ == "number":
		fd.Kind = KindNumber
	case typ == "integer":
		fd.Kind = KindInteger
	case typ == "boolean":
		fd.Kind = KindBoolean
	default:
		return Field{}, fmt.Errorf("the form's field %q has type %q; Tally shows text, numbers, yes/no and choices", shown, text.Clip(typ, 40))
	}
	if err != nil {
		return Field{}, fmt.Errorf("the form's field %q %w", shown, err)
	}
	if (fd.Kind == KindChoice || fd.Kind == KindChoices) && len(fd.Choices) == 0 {
		return Field{}, fmt.Errorf("the form's field %q offers no choices", shown)
	}
	fd.Default = parseDefault(fd, p.Default)
	return fd, nil
}

// schemaType reads a property's "type": a name, or a list of names of
// which "null" is ignored.
func schemaType(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", fmt.Errorf("has a type that is neither a name nor a list of names")
	}
	var out []string
	for _, t := range many {
		if t != "null" {
			out = append(out, t)
		}
	}
	if len(out) > 1 {
		return "", fmt.Errorf("may be any of %d types; Tally shows fields of one type", len(out))
	}
	if len(out) == 0 {
		return "", nil
	}
	return out[0], nil
}

// choices builds the values of a choice field from a plain enum (with its
// legacy enumNames) or titled entries.
func choices(enum []any, names []string, titled []titledValue) ([]Choice, error) {
	var out []Choice
	seen := map[string]bool{}
	add := func(v any, title string) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("has a choice that is not text (%v)", text.Clip(fmt.Sprint(v), 40))
		}
		if seen[s] {
			return nil
		}
		seen[s] = true
		out = append(out, Choice{Value: s, Title: text.Clip(title, maxChoiceTitle)})
		return nil
	}
	for i, v := range enum {
		title := ""
		if i < len(names) {
			title = names[i]
		}
		if err := add(v, title); err != nil {
			return nil, err
		}
	}
	for _, t := range titled {
		if err := add(t.Const, t.Title); err != nil {
			return nil, err
		}
	}
	if len(out) > maxChoices {
		return nil, fmt.Errorf("offers %d choices, more than the %d Tally shows", len(out), maxChoices)
	}
	return out, nil
}

// parseDefault reads a property's default as a value of the field; a
// default that does not fit the field counts as none.
func parseDefault(fd Field, raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil
	}
	nv, err := fd.Normalize(v)
	if err != nil {
		return nil
	}
	return nv
}
