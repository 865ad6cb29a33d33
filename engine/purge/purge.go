// Package purge lets the model tidy its own history: it is shown a
// numbered list of the messages and a temporary purge_context tool with two
// operations — remove a message, or replace text inside one by regular
// expression. The operations are collected, previewed, and only then
// applied by the engine as one recorded rebuild. Removing a tool call also
// removes its results, and removing a result removes its call and the
// call's other results, so no orphan survives; at least one plain user
// text is always kept.
package purge

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/transcript"
)

//go:embed instruction.md
var instruction string

// ToolName is the name of the temporary tool offered during a purge.
const ToolName = "purge_context"

// PreviewChars is how much of each message the numbered list shows.
const PreviewChars = 160

// Op is one purge operation proposed by the model.
type Op struct {
	Op      string `json:"op"`                // "remove" or "replace"
	Msg     int    `json:"msg"`               // message number from the list
	Pattern string `json:"pattern,omitempty"` // replace: Go regular expression
	With    string `json:"with,omitempty"`    // replace: replacement text
}

// Tool is the purge_context tool definition.
var Tool = chat.Tool{
	Name:        ToolName,
	Description: "Remove a message from the conversation history, or replace text inside one by regular expression. Be conservative.",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"op":{"type":"string","enum":["remove","replace"],"description":"remove a whole message, or replace text inside it"},` +
		`"msg":{"type":"integer","description":"the message number from the list"},` +
		`"pattern":{"type":"string","description":"replace only: Go regular expression to find"},` +
		`"with":{"type":"string","description":"replace only: the replacement text"}},` +
		`"required":["op","msg"],"additionalProperties":false}`),
}

// List renders the numbered message list shown to the model.
func List(msgs []transcript.Message) string {
	var b strings.Builder
	for i, m := range msgs {
		role := string(m.Role)
		switch {
		case m.Role == transcript.Tool:
			role = "tool " + m.ToolName
		case m.Kind != transcript.KindChat:
			role += " (" + string(m.Kind) + ")"
		}
		text := m.Body()
		for _, c := range m.ToolCalls {
			text += fmt.Sprintf(" [calls %s %s]", c.Name, c.Arguments)
		}
		text = strings.Join(strings.Fields(text), " ")
		if r := []rune(text); len(r) > PreviewChars {
			text = string(r[:PreviewChars]) + "…"
		}
		fmt.Fprintf(&b, "%d. %s, %d tokens: %s\n", i+1, role, transcript.TokensOf(m), text)
	}
	return b.String()
}

// Request builds the purge request: the session's system prompt, one user
// message with the instruction and the numbered list, and only the
// purge_context tool.
func Request(model, system string, msgs []transcript.Message) llm.Request {
	return llm.Request{
		Model: model,
		Tools: []chat.Tool{Tool},
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: system},
			{Role: chat.RoleUser, Content: strings.TrimSpace(instruction) + "\n\n" + List(msgs)},
		},
	}
}

// ParseOps reads the purge_context calls of a reply. Calls of other tools
// and malformed arguments are reported as errors naming the call.
func ParseOps(calls []llm.ToolCall) ([]Op, []error) {
	var ops []Op
	var errs []error
	for i, c := range calls {
		if c.Name != ToolName {
			errs = append(errs, fmt.Errorf("call %d of the model's proposal is to %q, not %s, so it was ignored", i+1, c.Name, ToolName))
			continue
		}
		var op Op
		if err := json.Unmarshal([]byte(c.Arguments), &op); err != nil {
			errs = append(errs, fmt.Errorf("call %d of the model's proposal has invalid arguments (%w), so it was ignored", i+1, err))
			continue
		}
		ops = append(ops, op)
	}
	return ops, errs
}

// Change is what one message will undergo.
type Change struct {
	Msg     int    `json:"msg"` // 1-based
	Action  string `json:"action"`
	Before  int    `json:"tokens_before"`
	After   int    `json:"tokens_after"`
	Because string `json:"because,omitempty"`
}

// Plan is the previewed result of a purge.
type Plan struct {
	Changes  []Change             `json:"changes"`
	Rejected []string             `json:"rejected,omitempty"`
	Messages []transcript.Message `json:"-"`
	Before   int                  `json:"tokens_before"`
	After    int                  `json:"tokens_after"`
}

// Apply computes the purge of msgs by ops without changing msgs. Invalid
// operations are listed in Rejected, never applied. Token counts are the
// ones the log stored with the messages (transcript.TokensOf), the same
// the context gauge and the compaction preview add up; an edited message
// is counted afresh with transcript.MessageTokens.
func Apply(msgs []transcript.Message, ops []Op) Plan {
	var p Plan
	remove := map[int]string{}
	edited := map[int]transcript.Message{}
	callOwner := map[string]int{}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			callOwner[c.ID] = i
		}
	}
	for _, op := range ops {
		i := op.Msg - 1
		if i < 0 || i >= len(msgs) {
			p.Rejected = append(p.Rejected, fmt.Sprintf("message %d does not exist (the list has %d)", op.Msg, len(msgs)))
			continue
		}
		switch op.Op {
		case "remove":
			remove[i] = "asked"
		case "replace":
			re, err := regexp.Compile(op.Pattern)
			if err != nil || op.Pattern == "" {
				p.Rejected = append(p.Rejected, fmt.Sprintf("message %d: pattern %q is not a valid regular expression", op.Msg, op.Pattern))
				continue
			}
			m := msgs[i]
			if e, ok := edited[i]; ok {
				m = e
			}
			changed := false
			blocks := make([]transcript.Block, len(m.Blocks))
			for k, bl := range m.Blocks {
				if bl.Type == transcript.BlockText {
					nt := re.ReplaceAllString(bl.Text, transcript.Neutralize(op.With))
					changed = changed || nt != bl.Text
					bl.Text = nt
				}
				blocks[k] = bl
			}
			if !changed {
				p.Rejected = append(p.Rejected, fmt.Sprintf("message %d: pattern %q matched nothing", op.Msg, op.Pattern))
				continue
			}
			m.Blocks = blocks
			m.Tokens, m.TokensKey = 0, "" // the stored count was for the old text
			edited[i] = m
		default:
			p.Rejected = append(p.Rejected, fmt.Sprintf("message %d: unknown op %q; use remove or replace", op.Msg, op.Op))
		}
	}
	// Pairing: a removed call takes its results; a removed result takes
	// its call and the call's other results.
	for changed := true; changed; {
		changed = false
		for i := range remove {
			m := msgs[i]
			if m.Role == transcript.Tool {
				if owner, ok := callOwner[m.ToolCallID]; ok {
					if _, done := remove[owner]; !done {
						remove[owner] = "pairs with a removed result"
						changed = true
					}
				}
			}
			for _, c := range m.ToolCalls {
				for k, r := range msgs {
					if r.Role == transcript.Tool && r.ToolCallID == c.ID {
						if _, done := remove[k]; !done {
							remove[k] = "pairs with a removed call"
							changed = true
						}
					}
				}
			}
		}
	}
	// Keep at least one plain user text: spare the newest one.
	keptUser := false
	for i, m := range msgs {
		if _, gone := remove[i]; !gone && m.IsPlainUserText() {
			keptUser = true
		}
	}
	if !keptUser {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].IsPlainUserText() {
				delete(remove, i)
				p.Rejected = append(p.Rejected, fmt.Sprintf("message %d is kept: at least one message from the user must remain", i+1))
				break
			}
		}
	}
	for i, m := range msgs {
		before := transcript.TokensOf(m)
		p.Before += before
		if why, gone := remove[i]; gone {
			p.Changes = append(p.Changes, Change{Msg: i + 1, Action: "remove", Before: before, Because: why})
			continue
		}
		if e, ok := edited[i]; ok {
			after := transcript.MessageTokens(e)
			p.Changes = append(p.Changes, Change{Msg: i + 1, Action: "replace", Before: before, After: after, Because: "asked"})
			p.Messages = append(p.Messages, e)
			p.After += after
			continue
		}
		p.Messages = append(p.Messages, m)
		p.After += before
	}
	sort.Slice(p.Changes, func(a, b int) bool { return p.Changes[a].Msg < p.Changes[b].Msg })
	return p
}

// Text renders a plan for people.
func (p Plan) Text() string {
	var b strings.Builder
	if len(p.Changes) == 0 {
		b.WriteString("The model proposed no changes.\n")
	}
	for _, c := range p.Changes {
		switch c.Action {
		case "remove":
			fmt.Fprintf(&b, "  remove  message %d (%d tokens)", c.Msg, c.Before)
		default:
			fmt.Fprintf(&b, "  shorten message %d (%d → %d tokens)", c.Msg, c.Before, c.After)
		}
		if c.Because != "asked" && c.Because != "" {
			fmt.Fprintf(&b, " — %s", c.Because)
		}
		b.WriteByte('\n')
	}
	for _, r := range p.Rejected {
		fmt.Fprintf(&b, "  not applied: %s\n", r)
	}
	fmt.Fprintf(&b, "History: %d → %d tokens.\n", p.Before, p.After)
	return b.String()
}

// ErrNothing is returned when a purge would change nothing.
var ErrNothing = errors.New("the model proposed no change that applies, so the history is unchanged; purge again later or compact instead")
