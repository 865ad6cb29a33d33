// Package transcript holds the conversation as the engine stores it: typed
// messages made of content blocks, and the AppendLog that only ever grows.
//
// The AppendLog caches each message's canonical wire form (the exact
// chat-completions message that will be sent) and its token count at the
// moment it is appended, so assembling a request is a copy of a slice and
// never a re-render of history. The count (WireTokens, the engine's only
// per-message token formula) is stored with the message, so a reopened
// session does not count again. The single way to change existing history
// is Rebuild, which returns a RebuildRecord for the audit trail.
package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Role is the chat-completions role of a message.
type Role string

// The roles a message can have. System messages never live in the log: the
// system prompt is the prefix zone and is assembled separately.
const (
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Kind says who produced a message. Only the engine produces the non-chat
// kinds; they travel in the user role wrapped in tags that say so.
type Kind string

// Message kinds.
const (
	KindChat        Kind = ""            // the human, the model, or a tool result
	KindStatus      Kind = "status"      // <agent_status> persisted in the log
	KindReminder    Kind = "reminder"    // <system-reminder> re-injection
	KindDiagnostics Kind = "diagnostics" // <diagnostics> after file writes
	KindSeed        Kind = "seed"        // [CYCLE STATE] seed of a new cycle
	KindAck         Kind = "ack"         // synthetic assistant acknowledgement
	KindRepair      Kind = "repair"      // result appended for an interrupted call
	// KindAttachment carries images a tool produced (read_file of a
	// picture): tool results cannot hold images on the chat-completions
	// wire, so they follow the step's results as a user-role message.
	KindAttachment Kind = "attachment"
)

// BlockType names a content block.
type BlockType string

// Block types.
const (
	BlockTurnMeta BlockType = "turn_meta" // the <turn_meta> header of a user turn
	BlockText     BlockType = "text"
	// BlockImage is a picture: the block's Image names it, its bytes live
	// in the blob store, and its Text is empty.
	BlockImage BlockType = "image"
)

// Block is one piece of a message's content.
type Block struct {
	Type  BlockType `json:"type"`
	Text  string    `json:"text"`
	Image ImageRef  `json:"image,omitzero"`
}

// ToolCall is one function call requested by the model. Arguments is the raw
// JSON text exactly as the model produced it, valid or not.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one entry of the transcript. Time is for people and is never
// sent to the model.
type Message struct {
	Role      Role    `json:"role"`
	Kind      Kind    `json:"kind,omitempty"`
	Blocks    []Block `json:"blocks,omitempty"`
	Reasoning string  `json:"reasoning,omitempty"`
	// ReplayReasoning decides, once and for all at append time, whether the
	// reasoning is sent back to the model with this message.
	ReplayReasoning bool       `json:"replay_reasoning,omitempty"`
	ToolCalls       []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID      string     `json:"tool_call_id,omitempty"`
	ToolName        string     `json:"tool_name,omitempty"`
	IsError         bool       `json:"is_error,omitempty"`
	// Args is the canonical argument text of the call this result answers,
	// kept for pruning duplicates; never sent.
	Args  string    `json:"args,omitempty"`
	Paths []string  `json:"paths,omitempty"`
	Time  time.Time `json:"time,omitzero"`
	// Redacted counts the secrets replaced at intake in a tool result's
	// text (for the tool card) or in an assistant reply's text, reasoning
	// and call arguments; never sent.
	Redacted int `json:"redacted,omitempty"`
	// Tokens is what the message costs on the wire, as the AppendLog
	// counted it when it was appended (see WireTokens), and TokensKey
	// identifies the wire form that count is for. The log sets both and
	// stores them with the message, so a reopened session does not count
	// again; it trusts a stored count only for the same wire form. Never
	// sent. Zero means not counted yet.
	Tokens    int    `json:"tokens,omitempty"`
	TokensKey string `json:"tokens_key,omitempty"`
}

// Text returns the concatenated text of the message's blocks, separated by a
// newline, as it is sent to the model; image blocks have no text and are
// left out (see Images).
func (m *Message) Text() string {
	switch len(m.Blocks) {
	case 0:
		return ""
	case 1:
		return m.Blocks[0].Text
	}
	var b strings.Builder
	first := true
	for _, bl := range m.Blocks {
		if bl.Type == BlockImage {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(bl.Text)
	}
	return b.String()
}

// Body returns the text of the message without its <turn_meta> block (and
// without its images).
func (m *Message) Body() string {
	var parts []string
	for _, bl := range m.Blocks {
		if bl.Type != BlockTurnMeta && bl.Type != BlockImage {
			parts = append(parts, bl.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TurnMeta returns the message's <turn_meta> block text, or "".
func (m *Message) TurnMeta() string {
	for _, bl := range m.Blocks {
		if bl.Type == BlockTurnMeta {
			return bl.Text
		}
	}
	return ""
}

// IsPlainUserText reports whether m is text typed by the human.
func (m *Message) IsPlainUserText() bool {
	return m.Role == User && m.Kind == KindChat
}

// UserText builds a human message: an optional <turn_meta> block then the text.
func UserText(turnMeta, text string, at time.Time) Message {
	m := Message{Role: User, Time: at}
	if turnMeta != "" {
		m.Blocks = append(m.Blocks, Block{Type: BlockTurnMeta, Text: turnMeta})
	}
	m.Blocks = append(m.Blocks, Block{Type: BlockText, Text: Neutralize(text)})
	return m
}

// Injected builds an engine-generated user-role message of the given kind.
// The text is trusted engine output and is not neutralised.
func Injected(kind Kind, text string, at time.Time) Message {
	return Message{Role: User, Kind: kind, Blocks: []Block{{Type: BlockText, Text: text}}, Time: at}
}

// AssistantReply builds a model message. Text and reasoning from the model
// are neutralised so they cannot forge engine tags.
func AssistantReply(text, reasoning string, calls []ToolCall, at time.Time) Message {
	m := Message{Role: Assistant, Reasoning: Neutralize(reasoning), ToolCalls: calls, Time: at}
	if text != "" {
		m.Blocks = []Block{{Type: BlockText, Text: Neutralize(text)}}
	}
	// Reasoning is replayed only inside a tool-call chain, where providers
	// with thinking modes require it; a final answer's reasoning is not.
	m.ReplayReasoning = len(calls) > 0 && reasoning != ""
	return m
}

// ToolResult builds the result message answering call. Content from tools
// (files, command output) is neutralised on the way in.
func ToolResult(call ToolCall, content string, isError bool, at time.Time) Message {
	return Message{
		Role:       Tool,
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Blocks:     []Block{{Type: BlockText, Text: Neutralize(content)}},
		IsError:    isError,
		Time:       at,
	}
}

// Encode returns the stored form of m.
func Encode(m Message) ([]byte, error) { return json.Marshal(m) }

// Decode parses a stored message, rejecting an entry without a known role.
func Decode(data []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("a stored message is not valid JSON (%w); the store may be damaged, so restore a backup or start a new session", err)
	}
	switch m.Role {
	case User, Assistant, Tool:
	default:
		return Message{}, fmt.Errorf("a stored message has the unknown role %q; the store may be damaged or written by a newer Tally, so restore a backup or upgrade Tally", m.Role)
	}
	return m, nil
}

// Clone returns a deep copy of m: it shares no slice with m, so one may be
// handed to another goroutine while the other stays in the log.
func (m Message) Clone() Message {
	m.Blocks = append([]Block(nil), m.Blocks...)
	m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
	m.Paths = append([]string(nil), m.Paths...)
	return m
}
