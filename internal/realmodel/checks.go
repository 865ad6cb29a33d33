package realmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// wireRequest is the part of a chat-completions body the checks read.
type wireRequest struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Stream   bool              `json:"stream"`
}

type wireMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// CheckRequest checks that body is a chat-completions request a strict
// server accepts: a system message at index 0 and nowhere else, every
// tool call answered by exactly one tool result before the next
// assistant or user message, and no tool result without its call.
func CheckRequest(body []byte) error {
	var r wireRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("the request is not JSON: %w", err)
	}
	if len(r.Messages) == 0 {
		return errors.New("the request has no messages")
	}
	open := map[string]bool{} // calls waiting for their result
	for i, raw := range r.Messages {
		var m wireMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("message %d is not a message: %w", i, err)
		}
		switch m.Role {
		case "system":
			if i != 0 {
				return fmt.Errorf("message %d is a system message after index 0", i)
			}
		case "tool":
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d is a result for %q, which no open call has", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case "assistant", "user":
			if len(open) > 0 {
				return fmt.Errorf("message %d (%s) comes while %d tool call(s) wait for a result", i, m.Role, len(open))
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || open[c.ID] {
					return fmt.Errorf("message %d has a tool call with an empty or repeated id %q", i, c.ID)
				}
				open[c.ID] = true
			}
		default:
			return fmt.Errorf("message %d has the role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the request ends with %d tool call(s) without a result", len(open))
	}
	return nil
}

// Messages returns the messages of a chat-completions body, each as the
// bytes it was sent with.
func Messages(body []byte) ([]json.RawMessage, error) {
	var r wireRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("the request is not JSON: %w", err)
	}
	return r.Messages, nil
}

// SharedMessages is how many leading messages of cur are byte for byte
// those of prev (the system message and the tools count as the prefix
// only when the tools are equal too: a changed catalog gives 0).
func SharedMessages(prev, cur []byte) int {
	var a, b wireRequest
	if json.Unmarshal(prev, &a) != nil || json.Unmarshal(cur, &b) != nil {
		return 0
	}
	if len(a.Tools) != len(b.Tools) {
		return 0
	}
	for i := range a.Tools {
		if !bytes.Equal(a.Tools[i], b.Tools[i]) {
			return 0
		}
	}
	n := 0
	for n < len(a.Messages) && n < len(b.Messages) && bytes.Equal(a.Messages[n], b.Messages[n]) {
		n++
	}
	return n
}
