// Package chat holds Tally's own shapes of a chat request: messages,
// content parts, tool calls and tool definitions, and their one JSON
// encoding, the OpenAI chat-completions wire format.
//
// It is the seam between the engine and the model adapter: the transcript
// renders its messages into these types, the request steps put them in
// order, and only engine/llm turns them into a provider call. The package
// imports nothing outside the standard library, so no library's wire types
// become the engine's domain model.
//
// The encoding is deterministic and byte for byte what go-openai writes
// for the same message inside a request's "messages" array (engine/llm
// tests hold the two side by side), so the encoding of a message made once
// is valid for every later request that carries it.
package chat

import (
	"encoding/json"
	"fmt"
)

// The roles a message can have.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// PartType is the kind of one content part.
type PartType string

// The kinds of content part.
const (
	PartText  PartType = "text"
	PartImage PartType = "image_url"
)

// Part is one part of a multi-part content: a text, or an image given by
// URL (a data: URL for an attached image).
type Part struct {
	Type     PartType
	Text     string // for PartText
	ImageURL string // for PartImage
}

// ToolCall is one function call of an assistant message.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // the raw JSON argument text, exactly as the model wrote it
}

// Message is one message of a request.
type Message struct {
	Role string
	// Content is the text. When Parts is not empty the content is sent as
	// Parts and Content is not sent.
	Content string
	// Parts is a multi-part content (text and images).
	Parts []Part
	// Reasoning is replayed reasoning, sent as "reasoning_content".
	Reasoning string
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool message answers.
	ToolCallID string
}

// Tool is one function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, a JSON object.
	Parameters json.RawMessage
}

// The wire shapes. Field order and tags are the encoding: keep them as the
// OpenAI chat-completions format (and go-openai) has them.
type (
	wireImage struct {
		URL string `json:"url,omitempty"`
	}
	wirePart struct {
		Type     PartType   `json:"type,omitempty"`
		Text     string     `json:"text,omitempty"`
		ImageURL *wireImage `json:"image_url,omitempty"`
	}
	wireFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
	}
	wireCall struct {
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireText struct {
		Role       string     `json:"role"`
		Content    string     `json:"content,omitempty"`
		Reasoning  string     `json:"reasoning_content,omitempty"`
		ToolCalls  []wireCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	wireParts struct {
		Role       string     `json:"role"`
		Content    []wirePart `json:"content,omitempty"`
		Reasoning  string     `json:"reasoning_content,omitempty"`
		ToolCalls  []wireCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	wireDefinition struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	wireTool struct {
		Function wireDefinition `json:"function"`
		Type     string         `json:"type"`
	}
)

// MarshalJSON writes m in the chat-completions format. It never fails.
func (m Message) MarshalJSON() ([]byte, error) {
	var calls []wireCall
	for _, c := range m.ToolCalls {
		calls = append(calls, wireCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	if len(m.Parts) == 0 {
		return json.Marshal(wireText{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolCalls: calls, ToolCallID: m.ToolCallID})
	}
	parts := make([]wirePart, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = wirePart{Type: p.Type, Text: p.Text}
		if p.ImageURL != "" {
			parts[i].ImageURL = &wireImage{URL: p.ImageURL}
		}
	}
	return json.Marshal(wireParts{Role: m.Role, Content: parts, Reasoning: m.Reasoning, ToolCalls: calls, ToolCallID: m.ToolCallID})
}

// MarshalJSON writes t in the chat-completions format. It fails only when
// Parameters is not valid JSON.
func (t Tool) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(wireTool{Type: "function", Function: wireDefinition(t)})
	if err != nil {
		return nil, fmt.Errorf("the parameters of tool %q are not valid JSON; fix the tool's schema: %w", t.Name, err)
	}
	return b, nil
}

// UnmarshalJSON reads a message in the chat-completions format, its
// content a string or an array of parts.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Reasoning  string          `json:"reasoning_content"`
		ToolCalls  []wireCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, Reasoning: w.Reasoning, ToolCallID: w.ToolCallID}
	if len(w.Content) > 0 && w.Content[0] == '[' {
		var parts []wirePart
		if err := json.Unmarshal(w.Content, &parts); err != nil {
			return fmt.Errorf("the message's content parts are malformed: %w", err)
		}
		for _, p := range parts {
			part := Part{Type: p.Type, Text: p.Text}
			if p.ImageURL != nil {
				part.ImageURL = p.ImageURL.URL
			}
			m.Parts = append(m.Parts, part)
		}
	} else if len(w.Content) > 0 && string(w.Content) != "null" {
		if err := json.Unmarshal(w.Content, &m.Content); err != nil {
			return fmt.Errorf("the message's content is neither text nor parts: %w", err)
		}
	}
	for _, c := range w.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return nil
}

// UnmarshalJSON reads a tool in the chat-completions format.
func (t *Tool) UnmarshalJSON(b []byte) error {
	var w wireTool
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Tool{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}
	return nil
}

// Encode returns m's encoding: what a request body carries for it.
func Encode(m Message) []byte {
	b, _ := m.MarshalJSON() // never fails
	return b
}

// EncodeTools returns the encoding of tools as a request's "tools" array.
func EncodeTools(tools []Tool) ([]byte, error) { return json.Marshal(tools) }
