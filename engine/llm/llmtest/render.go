package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/tally-dev/tally/engine/llm/llmtest/templatehook"
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
	renderer := templatehook.Get()
	if renderer == nil {
		return rendering{text: renderPlain(p, gen), template: TemplatePlain, fellBack: true,
			err: "no chat-template renderer is linked in; import engine/llm/llmtest/chattemplates"}
	}
	out, err := renderer(name, p.rawMsgs, p.rawTools, gen)
	if err == nil {
		return rendering{text: out, template: name}
	}
	r := rendering{text: renderPlain(p, gen), template: TemplatePlain, fellBack: true, err: err.Error()}
	if strings.Contains(err.Error(), systemRefusal) {
		r.refusal = "Invalid 'messages': the chat template refused the request: " + systemRefusal + "."
	}
	return r
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
		for _, img := range m.Images {
			sum := sha256.Sum256([]byte(img.URL))
			b.WriteString("\n<|image " + hex.EncodeToString(sum[:8]) + "|>")
		}
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
