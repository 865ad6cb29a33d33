// Package chattemplates renders scripted-server requests through the real
// Qwen3.5 and DeepSeek-V4 chat templates (with a jinja engine), so the
// server's token counts and cache simulation see what an inference server
// would. Importing it (for its side effect) registers the renderer with
// engine/llm/llmtest; tests and the smoke server do, the shipped app does
// not.
package chattemplates

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/ardanlabs/jinja"

	"github.com/tally-dev/tally/engine/llm/llmtest/templatehook"
)

func init() { templatehook.Register(Render) }

// Render renders a request with the named template.
func Render(name string, msgs, tools []json.RawMessage, gen bool) (string, error) {
	ct, ok := chatTemplates[name]
	if !ok {
		return "", fmt.Errorf("unknown template %q", name)
	}
	return renderTemplate(ct, msgs, tools, gen)
}

//go:embed templates/*.jinja
var templateFS embed.FS

type chatTemplate struct {
	file string
	bos  string
	once sync.Once
	tmpl *jinja.Template
	err  error
}

var chatTemplates = map[string]*chatTemplate{
	"qwen3.5":     {file: "templates/qwen3.5.jinja"},
	"deepseek-v4": {file: "templates/deepseek-v4.jinja", bos: "<｜begin▁of▁sentence｜>"},
}

func (t *chatTemplate) compiled() (*jinja.Template, error) {
	t.once.Do(func() {
		src, err := templateFS.ReadFile(t.file)
		if err != nil {
			t.err = err
			return
		}
		t.tmpl, t.err = jinja.Compile(string(src))
	})
	return t.tmpl, t.err
}

func renderTemplate(ct *chatTemplate, rawMsgs, rawTools []json.RawMessage, gen bool) (out string, err error) {
	tmpl, err := ct.compiled()
	if err != nil {
		return "", err
	}
	defer func() {
		// The template engine is third-party code running on request data;
		// a failure there must become a fallback, not a crashed test.
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("template panicked: %v", r)
		}
	}()
	msgs := make([]jinja.Value, 0, len(rawMsgs))
	for _, raw := range rawMsgs {
		v, err := orderedValue(raw)
		if err != nil {
			return "", err
		}
		if v.IsDict() {
			normalizeToolCalls(v.AsDict())
		}
		msgs = append(msgs, v)
	}
	tools := make([]jinja.Value, 0, len(rawTools))
	for _, raw := range rawTools {
		v, err := orderedValue(raw)
		if err != nil {
			return "", err
		}
		tools = append(tools, v)
	}
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(msgs),
		"add_generation_prompt": jinja.NewBool(gen),
		"bos_token":             jinja.NewString(ct.bos),
	}
	if len(tools) > 0 {
		data["tools"] = jinja.NewList(tools)
	}
	return tmpl.RenderValues(data)
}

// normalizeToolCalls replaces each tool call's JSON argument string with the
// decoded object, as inference servers do before applying a chat template.
// Arguments that are not a JSON object are left as the original string.
func normalizeToolCalls(msg *jinja.Dict) {
	v, ok := msg.Get("tool_calls")
	if !ok || !v.IsList() {
		return
	}
	for _, call := range v.AsList().Items {
		if !call.IsDict() {
			continue
		}
		fn, ok := call.AsDict().Get("function")
		if !ok || !fn.IsDict() {
			continue
		}
		args, ok := fn.AsDict().Get("arguments")
		if !ok || !args.IsString() {
			continue
		}
		parsedArgs, err := orderedValue([]byte(args.AsString()))
		if err == nil && parsedArgs.IsDict() {
			fn.AsDict().Set("arguments", parsedArgs)
		}
	}
}

// orderedValue decodes JSON into a jinja value, keeping object key order so
// that tojson reproduces the client's own ordering.
func orderedValue(raw []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Undefined(), fmt.Errorf("unexpected data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jinja.Undefined(), err
				}
				key, ok := kt.(string)
				if !ok {
					return jinja.Undefined(), fmt.Errorf("object key is not a string")
				}
				val, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				d.AsDict().Set(key, val)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), err
			}
			return d, nil
		case '[':
			var items []jinja.Value
			for dec.More() {
				val, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, val)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), err
			}
			return jinja.NewList(items), nil
		}
		return jinja.Undefined(), fmt.Errorf("unexpected delimiter %v", t)
	case string:
		return jinja.NewString(t), nil
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return jinja.NewInt(n), nil
		}
		f, err := t.Float64()
		if err != nil {
			return jinja.Undefined(), err
		}
		return jinja.NewFloat(f), nil
	case bool:
		return jinja.NewBool(t), nil
	case nil:
		return jinja.None(), nil
	}
	return jinja.Undefined(), fmt.Errorf("unexpected JSON token %v", tok)
}
