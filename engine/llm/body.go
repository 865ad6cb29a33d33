package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	openai "github.com/sashabaranov/go-openai"

	"github.com/tally-dev/tally/engine/chat"
)

// This file is the body assembly: the one step at which the bytes of a
// request body are put together after go-openai built it (see transport).
//
// go-openai builds the request around the messages and tools, but never
// sees them: the request given to it carries one placeholder message (and,
// when there are tools, one placeholder tool), and the transport replaces
// each placeholder's array with the real one, written from encodings made
// by engine/chat: the engine's cached encodings of the messages and tools
// (Request.Encoded), and for anything not cached an encoding made once per
// call, before the first attempt. The messages are not even copied into
// one buffer: the body is read from their encodings where they are
// (bodyReader), so the history is copied once per attempt, onto the wire.
//
// chat's encoding of a message is byte for byte what go-openai writes for
// the same message (the tests hold them side by side), and an array is its
// elements joined by commas between brackets. Around the arrays nothing
// changes but the three additions go-openai cannot make: an explicit
// "temperature":0 as the first member (its field is omitempty, so 0 would
// be dropped), DeepSeek's "thinking" switch of the effort (see
// applyEffort) and "prompt_cache_key" as the last member (it has no such
// field).

// The placeholders go-openai encodes where the real arrays go. A JSON
// string never holds an unescaped quote, so these bytes can only appear in
// go-openai's output as the members themselves; the model name, the only
// member before them, is a string.
const (
	messagesPlaceholder = "tally:body-assembly:messages"
	toolsPlaceholder    = "tally:body-assembly:tools"
)

var (
	messagesHole = []byte(`"messages":[{"role":"` + messagesPlaceholder + `"}]`)
	toolsHole    = []byte(`"tools":[{"type":"` + toolsPlaceholder + `"}]`)
)

// Encodings are cached encodings of a request's messages and tools, for
// Request.Encoded. They apply only to the very slices they were made for
// (the same first element in memory and the same length): a request whose
// Messages (or Tools) is any other slice, a copy, a sub-slice or a longer
// one, has all its messages (or tools) encoded for the call, so a caller
// that passes a request on with other messages can never send stale bytes.
type Encodings struct {
	msg0  *chat.Message
	msgs  [][]byte
	tool0 *chat.Tool
	ntool int
	tools []byte
}

// CachedEncodings returns the encodings of msgs and tools: enc[i] is
// chat.Encode(msgs[i]), or nil for a message to encode at send time, and
// toolsEnc is chat.EncodeTools(tools), or nil to encode them at send time. The
// caller guarantees that no message or tool of those slices changes while
// the encodings are in use (the engine's closed messages and its catalog
// never do). When len(enc) differs from len(msgs) no message is cached.
func CachedEncodings(msgs []chat.Message, enc [][]byte, tools []chat.Tool, toolsEnc []byte) Encodings {
	var e Encodings
	if len(msgs) > 0 && len(enc) == len(msgs) {
		e.msg0, e.msgs = &msgs[0], enc
	}
	if len(tools) > 0 && len(toolsEnc) > 0 {
		e.tool0, e.ntool, e.tools = &tools[0], len(tools), toolsEnc
	}
	return e
}

// Covers returns how many messages of msgs have a cached encoding: 0 when
// the encodings were made for another slice.
func (e Encodings) Covers(msgs []chat.Message) int {
	n := 0
	for _, b := range e.messagesOf(msgs) {
		if len(b) > 0 {
			n++
		}
	}
	return n
}

// messagesOf returns the cached encodings for msgs, or nil when they were
// made for another slice.
func (e Encodings) messagesOf(msgs []chat.Message) [][]byte {
	if e.msg0 == nil || len(msgs) != len(e.msgs) || &msgs[0] != e.msg0 {
		return nil
	}
	return e.msgs
}

// toolsOf returns the cached encoding of tools, or nil when it was made
// for another slice.
func (e Encodings) toolsOf(tools []chat.Tool) []byte {
	if e.tool0 == nil || len(tools) != e.ntool || &tools[0] != e.tool0 {
		return nil
	}
	return e.tools
}

// body is what the transport splices into the body go-openai built for one
// call: the same for every attempt.
type body struct {
	messages        [][]byte // each message's encoding, in order
	tools           []byte   // the tools array; nil: none
	cacheKey        []byte   // the encoded "prompt_cache_key" value, or nil
	extra           []byte   // members go-openai has no field for (the effort's), or nil
	temperatureZero bool     // add "temperature":0 as the first member
}

// assembly returns the body plan of r, whose go-openai request is creq,
// and the request to give go-openai: creq with placeholders where the plan
// supplies the arrays. It fails only when a tool's parameters are not
// valid JSON.
func (r Request) assembly(creq openai.ChatCompletionRequest, tempZero bool) (openai.ChatCompletionRequest, *body, error) {
	b := &body{temperatureZero: tempZero}
	if r.CacheKey != "" {
		b.cacheKey, _ = json.Marshal(r.CacheKey) // a string always encodes
	}
	cached := r.Encoded.messagesOf(r.Messages)
	b.messages = make([][]byte, len(r.Messages))
	for i := range r.Messages {
		if cached != nil && len(cached[i]) > 0 {
			b.messages[i] = cached[i]
			continue
		}
		b.messages[i] = chat.Encode(r.Messages[i])
	}
	creq.Messages = []openai.ChatCompletionMessage{{Role: messagesPlaceholder}}
	if len(r.Tools) > 0 {
		tools := r.Encoded.toolsOf(r.Tools)
		if len(tools) == 0 {
			var err error
			if tools, err = chat.EncodeTools(r.Tools); err != nil {
				return creq, nil, err
			}
		}
		b.tools = tools
		creq.Tools = []openai.Tool{{Type: toolsPlaceholder}}
	}
	return creq, b, nil
}

// assemblyError is a body go-openai built in a shape the assembly does not
// know, which only a change in go-openai can cause.
type assemblyError struct{ missing string }

func (e *assemblyError) Error() string {
	return fmt.Sprintf("the request body could not be assembled because the body go-openai wrote has no %s; this is a bug in Tally, please report it with the go-openai version", e.missing)
}

// assemble returns the body to send in place of built, the body go-openai
// wrote for the placeholder request (see assembly). The messages are not
// copied: the body is read from their encodings where they are (see
// bodyReader); only what surrounds them is written anew.
func (b *body) assemble(built []byte) (*bodyReader, error) {
	end := bytes.LastIndexByte(built, '}')
	if len(built) < 2 || built[0] != '{' || end < 0 {
		return nil, &assemblyError{missing: "enclosing object"}
	}
	r := &bodyReader{msgs: b.messages}
	out := make([]byte, 1, 64+len(built))
	out[0] = '{'
	if b.temperatureZero {
		out = append(out, `"temperature":0,`...) // the messages follow
	}
	i := bytes.Index(built, messagesHole)
	if i < 0 {
		return nil, &assemblyError{missing: "messages placeholder"}
	}
	out = append(out, built[1:i]...)
	r.head = append(out, `"messages":[`...)
	out = []byte{']'}            // the rest follows the messages
	pos := i + len(messagesHole) // built[:pos] is written
	if b.tools != nil {
		i := bytes.Index(built[pos:], toolsHole)
		if i < 0 {
			return nil, &assemblyError{missing: "tools placeholder"}
		}
		out = append(out, built[pos:pos+i]...)
		out = append(out, `"tools":`...)
		out = append(out, b.tools...)
		pos += i + len(toolsHole)
	}
	if end < pos {
		return nil, &assemblyError{missing: "closing brace after the placeholders"}
	}
	out = append(out, built[pos:end]...)
	if b.extra != nil {
		out = append(out, ',')
		out = append(out, b.extra...)
	}
	if b.cacheKey != nil {
		out = append(out, `,"prompt_cache_key":`...) // after the messages at least
		out = append(out, b.cacheKey...)
	}
	r.tail = append(out, built[end:]...)
	return r, nil
}

// bodyReader reads an assembled body: head, then the message encodings
// joined by commas, then tail. It reads the encodings where they are, so
// sending a long history copies it once, onto the wire, and allocates
// nothing for it.
type bodyReader struct {
	head []byte
	msgs [][]byte
	tail []byte

	chunk, off int // the chunk being read and how much of it was
}

// Len returns the length of the whole body.
func (r *bodyReader) Len() int {
	n := len(r.head) + len(r.tail) + max(len(r.msgs)-1, 0)
	for _, m := range r.msgs {
		n += len(m)
	}
	return n
}

// again returns a reader of the same body from its start.
func (r *bodyReader) again() *bodyReader {
	return &bodyReader{head: r.head, msgs: r.msgs, tail: r.tail}
}

var comma = []byte{','}

// at returns chunk i of the body: head, then each message with a comma
// between two, then tail; nil past the end.
func (r *bodyReader) at(i int) []byte {
	mid := max(2*len(r.msgs)-1, 0)
	switch {
	case i == 0:
		return r.head
	case i <= mid && i%2 == 1:
		return r.msgs[i/2]
	case i <= mid:
		return comma
	case i == mid+1:
		return r.tail
	}
	return nil
}

// Read implements io.Reader.
func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := r.at(r.chunk)
		if c == nil {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		k := copy(p[n:], c[r.off:])
		n += k
		if r.off += k; r.off == len(c) {
			r.chunk, r.off = r.chunk+1, 0
		}
	}
	return n, nil
}
