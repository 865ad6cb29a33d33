package llmtest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ardanlabs/jinja"
)

// Template names accepted by WithTemplate.
const (
	// TemplateQwen35 renders with the Qwen3.5 chat template (the default).
	// It lists the tools at the top of the prompt, renders tool calls and
	// tool results, and refuses a system message that is not first.
	TemplateQwen35 = "qwen3.5"
	// TemplateDeepSeekV4 renders with the DeepSeek-V4 chat template. It
	// merges all system messages into the preamble.
	TemplateDeepSeekV4 = "deepseek-v4"
	// TemplatePlain skips the chat templates and always uses the plain
	// fallback rendering.
	TemplatePlain = "plain"
)

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
	TemplateQwen35:     {file: "templates/qwen3.5.jinja"},
	TemplateDeepSeekV4: {file: "templates/deepseek-v4.jinja", bos: "<｜begin▁of▁sentence｜>"},
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

// systemRefusal is the exception the Qwen template raises for a system
// message that is not the first message.
const systemRefusal = "System message must be at the beginning"

// rendering is the outcome of rendering one request.
type rendering struct {
	text     string
	template string // template actually used, or TemplatePlain
	fellBack bool
	err      string // template error when fellBack
	refusal  string // template refused the request (surfaced as HTTP 400)
}

// render renders p with the named template, falling back to the plain
// rendering when the template fails. The prompt ends with the generation
// prompt (the assistant header the model continues from).
func render(name string, p *parsed) rendering { return renderWith(name, p, true) }

// renderWith is render with the generation prompt optional: without it the
// text is the conversation exactly as a later request that appends to it
// renders its start.
func renderWith(name string, p *parsed, gen bool) rendering {
	if name == TemplatePlain {
		return rendering{text: renderPlain(p, gen), template: TemplatePlain}
	}
	ct, ok := chatTemplates[name]
	if !ok {
		return rendering{text: renderPlain(p, gen), template: TemplatePlain, fellBack: true, err: fmt.Sprintf("unknown template %q", name)}
	}
	out, err := renderTemplate(ct, p, gen)
	if err == nil {
		return rendering{text: out, template: name}
	}
	r := rendering{text: renderPlain(p, gen), template: TemplatePlain, fellBack: true, err: err.Error()}
	if strings.Contains(err.Error(), systemRefusal) {
		r.refusal = "Invalid 'messages': the chat template refused the request: " + systemRefusal + "."
	}
	return r
}

func renderTemplate(ct *chatTemplate, p *parsed, gen bool) (out string, err error) {
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
	msgs := make([]jinja.Value, 0, len(p.rawMsgs))
	for _, raw := range p.rawMsgs {
		v, err := orderedValue(raw)
		if err != nil {
			return "", err
		}
		if v.IsDict() {
			normalizeToolCalls(v.AsDict())
		}
		msgs = append(msgs, v)
	}
	tools := make([]jinja.Value, 0, len(p.rawTools))
	for _, raw := range p.rawTools {
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

// renderPlain is the deterministic fallback rendering: the tools as compact
// JSON, then each message as a role header, its reasoning, content, tool
// calls and tool call id, then (when gen is set) the generation prompt.
func renderPlain(p *parsed, gen bool) string {
	var b strings.Builder
	if len(p.rawTools) > 0 {
		b.WriteString("<|tools|>\n")
		for _, raw := range p.rawTools {
			var buf bytes.Buffer
			if json.Compact(&buf, raw) != nil {
				buf.Reset()
				buf.Write(raw)
			}
			b.Write(buf.Bytes())
			b.WriteByte('\n')
		}
	}
	for _, m := range p.req.Messages {
		b.WriteString("<|" + m.Role + "|>\n")
		if m.ToolCallID != "" {
			b.WriteString("[tool_call_id " + m.ToolCallID + "]\n")
		}
		if m.ReasoningContent != "" {
			b.WriteString("<think>" + m.ReasoningContent + "</think>\n")
		}
		b.WriteString(m.Content)
		for _, tc := range m.ToolCalls {
			call, _ := json.Marshal(map[string]string{"id": tc.ID, "name": tc.Name, "arguments": tc.Arguments})
			b.WriteString("\n<tool_call>")
			b.Write(call)
			b.WriteString("</tool_call>")
		}
		b.WriteString("\n<|end|>\n")
	}
	if gen {
		b.WriteString("<|assistant|>\n")
	}
	return b.String()
}
