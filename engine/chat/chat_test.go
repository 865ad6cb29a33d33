package chat

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEncodingRoundTrips reads back what it writes: every field of a
// message, as text or as parts, and a tool.
func TestEncodingRoundTrips(t *testing.T) {
	for _, m := range []Message{
		{Role: RoleSystem, Content: "be <careful> & brief"},
		{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "look"}, {Type: PartImage, ImageURL: "data:image/png;base64,AA=="}}},
		{Role: RoleAssistant, Reasoning: "think", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "a\x00b\u2028"},
	} {
		var back Message
		if err := json.Unmarshal(Encode(m), &back); err != nil {
			t.Fatalf("%s: %v", Encode(m), err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%s read back as %+v", Encode(m), back)
		}
	}
	tools := []Tool{{Name: "grep", Description: "search", Parameters: json.RawMessage(`{"type":"object"}`)}}
	b, err := EncodeTools(tools)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[{"function":{"name":"grep","description":"search","parameters":{"type":"object"}},"type":"function"}]` {
		t.Errorf("tools encode as %s", b)
	}
	var back []Tool
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tools) {
		t.Errorf("tools read back as %+v, %v", back, err)
	}
	if _, err := EncodeTools([]Tool{{Name: "bad", Parameters: json.RawMessage(`{`)}}); err == nil {
		t.Error("a tool whose schema is not JSON was encoded")
	}
}

// FuzzDecodeMessage reads arbitrary bytes as a message: it never panics,
// and what it reads encodes to bytes it reads back the same.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]}`))
	f.Add([]byte(`{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"n","arguments":"{}"}}]}`))
	f.Add([]byte(`{"content":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if json.Unmarshal(b, &m) != nil {
			return
		}
		var again Message
		if err := json.Unmarshal(Encode(m), &again); err != nil {
			t.Fatalf("%s does not read back: %v", Encode(m), err)
		}
		if string(Encode(again)) != string(Encode(m)) {
			t.Fatalf("%s read back as %s", Encode(m), Encode(again))
		}
	})
}
