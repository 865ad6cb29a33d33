package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// normalizeArgs maps empty or null arguments to an empty JSON object.
func normalizeArgs(args []byte) []byte {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return []byte("{}")
	}
	return trimmed
}

// decodeParams is DecodeArgs for the built-in tools.
func decodeParams(_ string, args json.RawMessage, v any) error { return DecodeArgs(args, v) }

// DecodeArgs is the one strict decoder of tool arguments: it decodes args
// (a JSON object; empty or null means {}) into the struct pointed to by v,
// rejecting unknown parameters, values of the wrong type and extra text
// with one sentence that names the parameter and lists the accepted ones.
func DecodeArgs(args json.RawMessage, v any) error {
	data := normalizeArgs(args)
	if data[0] != '{' {
		return fmt.Errorf("arguments must be a JSON object like {%s}, got %s; send the parameters as one JSON object", exampleFields(v), quoteSnippet(string(data), 60))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeDecodeError(v, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("arguments contain extra text after the JSON object; send exactly one JSON object")
	}
	return nil
}

func describeDecodeError(v any, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fmt.Errorf("arguments must be a JSON object like {%s}; send the parameters as one JSON object", exampleFields(v))
		}
		return fmt.Errorf("parameter %q must be %s, got a JSON %s; fix its type and call again", typeErr.Field, kindName(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("arguments are not valid JSON (%w); send the parameters as one valid JSON object", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return fmt.Errorf("unknown parameter %s; the parameters are %s", name, fieldList(v))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("arguments are not valid JSON (unexpected end of input); send the parameters as one complete JSON object")
	default:
		return fmt.Errorf("arguments could not be decoded (%w); send the parameters as one valid JSON object", err)
	}
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "a different type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return kindName(t.Elem())
	default:
		return "a " + t.Kind().String()
	}
}

// jsonFields lists the JSON names of the struct fields of *v in order.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func fieldList(v any) string {
	names := jsonFields(v)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func exampleFields(v any) string {
	names := jsonFields(v)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%q: ...", names[0])
}

// quoteSnippet quotes s, shortened to at most n runes.
func quoteSnippet(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return fmt.Sprintf("%q…", string(r[:n]))
	}
	return fmt.Sprintf("%q", s)
}

// schema compacts a JSON Schema literal written in the source. It panics on
// invalid JSON, which is a programming error caught by the tests.
func schema(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("tool: invalid parameter schema: " + err.Error())
	}
	return json.RawMessage(b.Bytes())
}
