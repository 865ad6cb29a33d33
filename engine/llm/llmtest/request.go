package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Req is a parsed chat-completions request as the script sees it.
type Req struct {
	// Index is the request's position in Server.Requests (0-based, counting
	// rejected requests too).
	Index int
	// Step is the number of script replies produced before this request.
	Step int
	// Model is the requested model name.
	Model string
	// Messages are the request messages in order.
	Messages []Message
	// Tools are the names of the offered functions, in order.
	Tools []string
	// MaxTokens is max_tokens, or max_completion_tokens when only that is
	// set; 0 when neither was sent.
	MaxTokens int
	// Temperature is nil when the request had no temperature field.
	Temperature *float64
	// Stream reports whether the client asked for a streamed answer.
	Stream bool
	// IncludeUsage reports stream_options.include_usage.
	IncludeUsage bool
	// Rendered is the prompt text produced by the chat template.
	Rendered string
	// PromptTokens is the number of tokens in Rendered.
	PromptTokens int
}

// Message is one request message.
type Message struct {
	Role string
	// Content is the message text; for array content the text parts are
	// concatenated.
	Content string
	// ReasoningContent is the DeepSeek-style reasoning_content field.
	ReasoningContent string
	// ToolCalls are the assistant's function calls.
	ToolCalls []ToolCall
	// ToolCallID is set on tool results.
	ToolCallID string
	// Name is the optional participant name.
	Name string
	// Images are the message's image_url content parts, in order.
	Images []Image
}

// Image is one image_url content part of a request message.
type Image struct {
	// URL is the part's url exactly as sent.
	URL string
	// Detail is the part's detail field ("" when absent).
	Detail string
	// MediaType and Data are the media type and the decoded bytes of a
	// data: URL (base64); both are empty for any other URL.
	MediaType string
	Data      []byte
}

// LastUser returns the content of the last user message, or "" when there
// is none. It is a convenience for scripts.
func (r *Req) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

type wireRequest struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	Temperature         *float64          `json:"temperature"`
	Stream              bool              `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parsed is a decoded request plus the raw pieces the renderer needs.
type parsed struct {
	req      Req
	rawMsgs  []json.RawMessage
	rawTools []json.RawMessage
}

// parseRequest decodes a chat request body. The error is phrased as an
// OpenAI error message.
func parseRequest(body []byte) (*parsed, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		//lint:ignore ST1005 the text mimics the OpenAI API's own error message
		return nil, fmt.Errorf("We could not parse the JSON body of your request: %w", err)
	}
	p := &parsed{rawMsgs: w.Messages, rawTools: w.Tools}
	p.req.Model = w.Model
	p.req.Temperature = w.Temperature
	p.req.Stream = w.Stream
	if w.StreamOptions != nil {
		p.req.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	switch {
	case w.MaxTokens != nil:
		p.req.MaxTokens = *w.MaxTokens
	case w.MaxCompletionTokens != nil:
		p.req.MaxTokens = *w.MaxCompletionTokens
	}
	for i, raw := range w.Messages {
		var m wireMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("Invalid value for 'messages[%d]': %w", i, err)
		}
		text, images, err := contentParts(m.Content, i)
		if err != nil {
			return nil, err
		}
		if len(images) > 0 && m.Role != "user" {
			//lint:ignore ST1005 the text mimics the OpenAI API's own error message
			return nil, fmt.Errorf("Invalid 'messages[%d]'. Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", i, m.Role)
		}
		msg := Message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID, Name: m.Name, Images: images}
		if m.ReasoningContent != nil {
			msg.ReasoningContent = *m.ReasoningContent
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		p.req.Messages = append(p.req.Messages, msg)
	}
	for i, raw := range w.Tools {
		var t struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("Invalid value for 'tools[%d]': %w", i, err)
		}
		if t.Function == nil || t.Function.Name == "" {
			//lint:ignore ST1005 the text mimics the OpenAI API's own error message
			return nil, fmt.Errorf("Missing required parameter: 'tools[%d].function.name'.", i)
		}
		p.req.Tools = append(p.req.Tools, t.Function.Name)
	}
	return p, nil
}

// contentParts flattens message i's content field (string, null or an
// array of parts) into plain text, the text parts concatenated, and its
// image_url parts. The error is phrased as an OpenAI error message.
func contentParts(raw json.RawMessage, i int) (string, []Image, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, fmt.Errorf("Invalid value for 'messages[%d].content': %w", i, err)
		}
		return s, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL    string `json:"url"`
			Detail string `json:"detail"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, fmt.Errorf("Invalid value for 'messages[%d].content': content must be a string or an array of content parts", i)
	}
	var b strings.Builder
	var images []Image
	for j, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				//lint:ignore ST1005 the text mimics the OpenAI API's own error message
				return "", nil, fmt.Errorf("Missing required parameter: 'messages[%d].content[%d].image_url.url'.", i, j)
			}
			img, err := parseImageURL(p.ImageURL.URL)
			if err != nil {
				return "", nil, fmt.Errorf("Invalid 'messages[%d].content[%d].image_url.url': %w", i, j, err)
			}
			img.Detail = p.ImageURL.Detail
			images = append(images, img)
		default:
			b.WriteString(p.Text)
		}
	}
	return b.String(), images, nil
}

// parseImageURL decodes a data: URL the way providers do: a media type of
// an image, ";base64," and standard base64. Other URLs are kept as they
// are.
func parseImageURL(url string) (Image, error) {
	img := Image{URL: url}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return img, nil
	}
	mt, payload, ok := strings.Cut(rest, ";base64,")
	if !ok || !strings.HasPrefix(mt, "image/") {
		return Image{}, fmt.Errorf("expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,...')")
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || len(data) == 0 {
		return Image{}, fmt.Errorf("the image data is not valid base64")
	}
	img.MediaType, img.Data = mt, data
	return img, nil
}

var knownRoles = map[string]bool{
	"system": true, "developer": true, "user": true, "assistant": true, "tool": true,
}

// validate applies the structural checks strict servers perform and returns
// an OpenAI-style message describing the first violation, or "".
func validate(msgs []Message) string {
	if len(msgs) == 0 {
		return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
	}
	for i, m := range msgs {
		if !knownRoles[m.Role] {
			return fmt.Sprintf("Invalid value for 'messages[%d].role': %q is not one of 'system', 'developer', 'user', 'assistant' or 'tool'.", i, m.Role)
		}
	}
	// pending holds the tool call ids of the most recent assistant message
	// that still await a result; open is true while we are inside the run of
	// tool messages that answers it.
	var pending map[string]bool
	var pendingOrder []string
	pendingAt := -1
	open := false
	closeBlock := func() string {
		if !open {
			return ""
		}
		open = false
		var missing []string
		for _, id := range pendingOrder {
			if pending[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s (assistant message at index %d).", strings.Join(missing, ", "), pendingAt)
		}
		return ""
	}
	for i, m := range msgs {
		if m.Role == "tool" {
			if m.ToolCallID == "" {
				return fmt.Sprintf("Missing required parameter: 'messages[%d].tool_call_id'.", i)
			}
			if !open {
				return fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (messages[%d] answers %q).", i, m.ToolCallID)
			}
			answered, known := pending[m.ToolCallID]
			if !known {
				return fmt.Sprintf("Invalid parameter: messages[%d] has tool_call_id %q, which does not match any tool call of the preceding assistant message.", i, m.ToolCallID)
			}
			if !answered {
				return fmt.Sprintf("Invalid parameter: messages[%d] answers tool_call_id %q a second time; each tool call takes exactly one result.", i, m.ToolCallID)
			}
			pending[m.ToolCallID] = false
			continue
		}
		if msg := closeBlock(); msg != "" {
			return msg
		}
		if m.Role == "system" && i != 0 {
			return fmt.Sprintf("Invalid 'messages[%d]': a system message is only allowed as the first message.", i)
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			pending = make(map[string]bool, len(m.ToolCalls))
			pendingOrder = pendingOrder[:0]
			pendingAt = i
			for j, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Sprintf("Missing required parameter: 'messages[%d].tool_calls[%d].id'.", i, j)
				}
				if tc.Name == "" {
					return fmt.Sprintf("Missing required parameter: 'messages[%d].tool_calls[%d].function.name'.", i, j)
				}
				if _, dup := pending[tc.ID]; dup {
					return fmt.Sprintf("Invalid 'messages[%d].tool_calls': duplicate tool call id %q.", i, tc.ID)
				}
				pending[tc.ID] = true
				pendingOrder = append(pendingOrder, tc.ID)
			}
			open = true
		}
	}
	return closeBlock()
}

// injectedPrefixes mark user-role messages written by an agent runtime
// rather than by the person (status bars, reminders, diagnostics, the
// images tools returned).
var injectedPrefixes = []string{"<agent_status", "<system-reminder", "<diagnostics", "<tool_images", "[CYCLE STATE]"}

// IsInjected reports whether a user message's content is runtime-injected.
func IsInjected(content string) bool {
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(content, p) {
			return true
		}
	}
	return false
}

// LastHuman returns the last user message that is not runtime-injected
// (see IsInjected), or "".
func (r *Req) LastHuman() string {
	if i := r.lastHumanIndex(); i >= 0 {
		return r.Messages[i].Content
	}
	return ""
}

// ToolResultsSinceHuman counts tool results after the last human message:
// how far into its turn the agent is.
func (r *Req) ToolResultsSinceHuman() int {
	n := 0
	for _, m := range r.Messages[r.lastHumanIndex()+1:] {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

func (r *Req) lastHumanIndex() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && !IsInjected(m.Content) {
			return i
		}
	}
	return -1
}

// alternation rejects two user messages in a row, as strict providers do.
func alternation(msgs []Message) string {
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == "user" && msgs[i-1].Role == "user" {
			return fmt.Sprintf("The model does not support successive user or assistant messages (messages[%d] and messages[%d] in your input). You should interleave the user/assistant messages in the message sequence.", i-1, i)
		}
	}
	return ""
}
