package transcript

import "fmt"

// CheckPairing verifies the API's pairing rules over msgs: every assistant
// tool call is followed, before any other kind of message, by exactly one
// tool result with its ID, and every tool result answers such a call.
func CheckPairing(msgs []Message) error {
	pending := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case Tool:
			if !pending[m.ToolCallID] {
				return fmt.Errorf("message %d is a tool result for %q, which no preceding assistant message called", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return fmt.Errorf("message %d arrives while %d tool call(s) still lack a result", i, len(pending))
		}
		if m.Role == Assistant {
			for _, c := range m.ToolCalls {
				if pending[c.ID] {
					return fmt.Errorf("message %d repeats tool call id %q", i, c.ID)
				}
				pending[c.ID] = true
			}
		}
	}
	return nil
}

// Unanswered returns the tool calls at the end of msgs that have no result
// yet, in call order: what a repair must answer after an interruption.
func Unanswered(msgs []Message) []ToolCall {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == Assistant {
			last = i
			break
		}
		if msgs[i].Role != Tool {
			return nil
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		answered[m.ToolCallID] = true
	}
	var out []ToolCall
	for _, c := range msgs[last].ToolCalls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}
