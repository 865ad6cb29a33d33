package llm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

// wireChunk is one streamed chat.completion.chunk, decoded by hand so the
// fields go-openai does not model (DeepSeek cache counts, "reasoning") are
// kept.
type wireChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string         `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        *string         `json:"reasoning"`
			ToolCalls        []wireCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

type wireCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// callBuf accumulates one tool call.
type callBuf struct {
	id, name string
	args     strings.Builder
}

// assembler builds a Response from stream chunks. It never holds more than
// its limits allow: a chunk that would pass a cap is refused whole, before
// any of it is kept or passed on.
type assembler struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     map[int]*callBuf
	lastCall  int // index of the most recently touched call, -1 if none
	finish    string
	usage     *wireUsage
	shown     bool // some output was passed on (text or a tool call)
	lim       replyLimits
	size      int // bytes kept so far, counted against lim.reply
}

func newAssembler(lim replyLimits) *assembler {
	return &assembler{calls: map[int]*callBuf{}, lastCall: -1, lim: lim}
}

// grow accounts for n more bytes of the reply.
func (a *assembler) grow(n int) error {
	if a.size+n > a.lim.reply {
		return &tooLargeError{what: fmt.Sprintf("its text (content, reasoning and tool-call arguments together) passed the %s limit", sizeText(int64(a.lim.reply)))}
	}
	a.size += n
	return nil
}

// add folds one raw chunk into the response, passing text to cb.
func (a *assembler) add(raw []byte, cb Callbacks, key string) error {
	var c wireChunk
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("the server sent a stream chunk that is not valid chat-completions JSON (%w); check that the base URL points to an OpenAI-compatible API", err)
	}
	if c.Error != nil {
		return &APIError{Message: text.OneLine(redact(c.Error.Message, key), errorDetailRunes), Type: text.OneLine(redact(c.Error.Type, key), errorDetailRunes)}
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is ever requested
		}
		var d Delta
		if ch.Delta.Content != nil {
			d.Content = *ch.Delta.Content
		}
		switch {
		case ch.Delta.ReasoningContent != nil:
			d.Reasoning = *ch.Delta.ReasoningContent
		case ch.Delta.Reasoning != nil:
			d.Reasoning = *ch.Delta.Reasoning
		}
		if err := a.grow(len(d.Content) + len(d.Reasoning)); err != nil {
			return err
		}
		a.content.WriteString(d.Content)
		a.reasoning.WriteString(d.Reasoning)
		if d.Content != "" || d.Reasoning != "" {
			a.shown = true
			cb.delta(d)
		}
		for _, tc := range ch.Delta.ToolCalls {
			if err := a.addCall(tc); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	return nil
}

// addCall merges one tool call delta. Deltas are matched by index; for
// servers that omit the index, a delta with a new id starts a new call and
// one without an id continues the latest call. It fails when the call
// would pass a size cap or be one call too many.
func (a *assembler) addCall(tc wireCallDelta) error {
	a.shown = true
	idx := a.lastCall
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case tc.ID != "" && (idx < 0 || (a.calls[idx].id != "" && a.calls[idx].id != tc.ID)):
		idx = a.nextIndex()
	case idx < 0:
		idx = 0
	}
	b := a.calls[idx]
	if b == nil {
		if len(a.calls) >= MaxToolCalls {
			return &tooLargeError{what: fmt.Sprintf("it made more than %d tool calls", MaxToolCalls)}
		}
		b = &callBuf{}
		a.calls[idx] = b
	}
	a.lastCall = idx
	args := argumentText(tc.Function.Arguments)
	if b.args.Len()+len(args) > a.lim.call {
		name := b.name
		if name == "" {
			name = tc.Function.Name
		}
		return &tooLargeError{what: fmt.Sprintf("the arguments of tool call %s passed the %s limit", callName(name), sizeText(int64(a.lim.call)))}
	}
	var grow int
	if b.id == "" {
		grow += len(tc.ID)
	}
	if b.name == "" {
		grow += len(tc.Function.Name)
	}
	if err := a.grow(grow + len(args)); err != nil {
		return err
	}
	if b.id == "" {
		b.id = tc.ID
	}
	if b.name == "" {
		b.name = tc.Function.Name
	}
	b.args.WriteString(args)
	return nil
}

// callName quotes a tool name from the server for an error message,
// shortened to 64 characters.
func callName(name string) string {
	return strconv.Quote(text.Clip(name, 64))
}

func (a *assembler) nextIndex() int {
	next := 0
	for i := range a.calls {
		next = max(next, i+1)
	}
	return next
}

// argumentText returns the text of an arguments delta: the string value when
// it is a JSON string (the standard), the raw JSON otherwise (some servers
// send an object), and "" for null or nothing.
func argumentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

// response returns the assembled response (without timing and attempts).
// partial is what was streamed of an answer cut short — its text and
// reasoning, never its calls — or nil when nothing was.
func (a *assembler) partial() *Response {
	if a.content.Len() == 0 && a.reasoning.Len() == 0 {
		return nil
	}
	return &Response{Content: a.content.String(), Reasoning: a.reasoning.String()}
}

func (a *assembler) response() *Response {
	r := &Response{
		Content:      a.content.String(),
		Reasoning:    a.reasoning.String(),
		FinishReason: a.finish,
	}
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		b := a.calls[i]
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: b.args.String()})
	}
	if a.usage != nil {
		r.Usage = a.usage.usage()
		r.HasUsage = true
	}
	return r
}
