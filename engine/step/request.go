package step

import (
	"slices"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
)

// This file and steps.go are the request pipeline: every byte of a turn
// request, and of a sub-agent's, is decided here, in these steps and in
// this order. In code the order is Steps (steps.go): prefix (1-2),
// log (3-6, rendered at append and joined as pushed), status (7) and the
// encodings the body carries; the turn and every sub-agent run the same
// list through their own requester.
//
//  1. System prompt: the one system message, at index 0. It is the prompt
//     assembled at session start (SystemSections) with the compaction
//     summary merged after it once there is one (systemWithSummary), and
//     changes only by a booked prefix change: a compaction summary or a
//     new cycle.
//  2. Tool catalog: the registry's tools in its order (built-ins sorted by
//     name, then extra tools, then activated deferred tools), so adding a
//     tool only ever appends. Steps 1 and 2 are the prefix zone, set by
//     the session's resetPrefix and compared with the last one sent (checkDrift) before
//     each request.
//  3. Log wire bytes: each log entry's wire message, rendered once when
//     the message was appended (transcript.AppendLog) and copied verbatim
//     into every later request, never rendered again. Two history-only
//     rules shape that rendering; they are fixed for the session's life by
//     WireRules and applied by the log at append time, so a message's
//     bytes never depend on when a request was built:
//  4. <turn_meta> folding: a <turn_meta> block equal to the previous one
//     is sent as <turn_meta_unchanged/>.
//  5. Tool-result references: a tool result of at least DedupeMin bytes
//     identical to an earlier one is sent as a <TOOL_RESULT_REF> line
//     (results of tools that write excepted).
//  6. Consecutive-user joining: each wire message is pushed with
//     llm.AppendJoined, the engine's only joining rule, so a user message
//     following a user message is joined into it.
//  7. The status block. In tail mode (the default) the request's
//     <agent_status> block rides at its very end, outside the log, pushed
//     like a message (so it joins a trailing user message) into the spare
//     capacity past the skeleton: the skeleton itself is never written, so
//     nothing has to be restored after the send. In append mode the block
//     is committed to the log first and goes through steps 3 and 6.
//
// Steps 1 and 3-6 are kept up to date in the skeleton, which takes only
// the entries appended since the last request, so building a request
// copies nothing, and so is each message's JSON
// encoding: a log entry's is the one the log rendered (Entry.Bytes), a
// message made by joining is encoded once when it closes, and only the
// open trailing user message (once something was joined into it) and the
// status are encoded per request. The request carries those encodings
// (llm.CachedEncodings), with the catalog's, made at SetPrefix.
// The messages and tools are Tally's own types (engine/chat), whose one
// encoding is the chat-completions wire format. Nothing downstream writes
// request bytes but the llm layer's one body assembly (see llm's body.go
// and transport): it sends the body go-openai marshals around those
// arrays, written from the encodings, adding only an explicit
// "temperature":0 when one was asked for and a "prompt_cache_key" when one
// is set. So a step costs O(new messages)
// beyond copying the bytes onto the wire.
//
// The invariant this guarantees: request N+1's messages begin with request
// N's messages, without N's status (the tail slot of step 7: the status
// message, or the status joined at the end of a user message), followed by
// N's reply, byte for byte, unless a recorded rebuild (compaction, purge,
// new cycle, rollback) came between them.

// skeleton is the message list of the next request without its status:
// steps 1 and 3-6, each message with its JSON encoding (chat.Encode),
// made once. closed holds the messages no later push can change and enc
// their encodings, index for index; open, when hasOpen, is the trailing
// user message, which a following user message (or the status) still
// joins, and openEnc its encoding while it is one log entry's wire message
// as the log rendered it (nil once something was joined into it). Building
// a request writes only the spare capacity past closed and enc.
type skeleton struct {
	closed  []chat.Message
	enc     [][]byte
	open    chat.Message
	openEnc []byte
	hasOpen bool
	logged  int // log entries pushed
}

// reset starts the skeleton over from the system message, with room for
// about n more messages.
func (k *skeleton) reset(system chat.Message, n int) {
	k.closed = append(make([]chat.Message, 0, n+64), system)
	k.enc = append(make([][]byte, 0, n+64), chat.Encode(system))
	k.open, k.openEnc, k.hasOpen, k.logged = chat.Message{}, nil, false, 0
}

// scratch returns closed and enc followed by the open message and its
// encoding, written into the spare capacity past them, which it keeps at
// least two entries long (growing in amortised steps, so a request never
// copies the transcript).
func (k *skeleton) scratch() ([]chat.Message, [][]byte) {
	if cap(k.closed)-len(k.closed) < 2 || cap(k.enc)-len(k.enc) < 2 {
		k.closed = slices.Grow(k.closed, len(k.closed)/4+16)
		k.enc = slices.Grow(k.enc, len(k.enc)/4+16)
	}
	msgs, enc := k.closed, k.enc
	if k.hasOpen {
		msgs, enc = append(msgs, k.open), append(enc, k.openEnc)
	}
	return msgs, enc
}

// join pushes w, whose encoding is b (nil: not known), after msgs and enc
// by llm.AppendJoined: a message joined into the last one leaves that
// one's encoding unknown.
func join(msgs []chat.Message, enc [][]byte, w chat.Message, b []byte) ([]chat.Message, [][]byte) {
	n := len(msgs)
	msgs = llm.AppendJoined(msgs, w)
	if len(msgs) == n {
		enc[n-1] = nil
		return msgs, enc
	}
	return msgs, append(enc, b)
}

// push appends one wire message (step 6) whose encoding, as the log
// rendered it, is b. A message that becomes closed is encoded then, once,
// unless its encoding is known.
func (k *skeleton) push(w chat.Message, b []byte) {
	msgs, enc := k.scratch()
	msgs, enc = join(msgs, enc, w, b)
	n := len(msgs)
	last := n
	if n > 1 && msgs[n-1].Role == chat.RoleUser {
		last = n - 1
		k.open, k.openEnc, k.hasOpen = msgs[n-1], enc[n-1], true
	} else {
		k.hasOpen = false
	}
	// Only the former open message and w can be new to closed.
	for i := len(k.closed); i < last; i++ {
		if enc[i] == nil {
			enc[i] = chat.Encode(msgs[i])
		}
	}
	k.closed, k.enc = msgs[:last], enc[:last]
}

// messages returns the request's messages and their encodings with tail
// (the status of step 7) pushed at the end, or without one when tail is
// nil; the encodings of the open message, once joined, and of the status
// are nil, left to the llm layer. The result shares memory with the
// skeleton and is valid until the next push.
func (k *skeleton) messages(tail *chat.Message) ([]chat.Message, [][]byte) {
	msgs, enc := k.scratch()
	if tail != nil {
		msgs, enc = join(msgs, enc, *tail, nil)
	}
	return msgs, enc
}
