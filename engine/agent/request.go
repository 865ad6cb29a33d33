package agent

import (
	"encoding/json"
	"fmt"
	"slices"

	openai "github.com/sashabaranov/go-openai"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// This file is the request pipeline: every byte of a turn request is
// decided here, in these steps and in this order.
//
//  1. System prompt: the one system message, at index 0. It is the prompt
//     assembled at session start (SystemSections) with the compaction
//     summary merged after it once there is one (systemWithSummary), and
//     changes only by a booked prefix change: a compaction summary or a
//     new cycle.
//  2. Tool catalog: the registry's tools in its order (built-ins sorted by
//     name, then extra tools, then activated deferred tools), so adding a
//     tool only ever appends. Steps 1 and 2 are the prefix zone, set by
//     resetPrefix and compared with the last one sent (checkDrift) before
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
// Steps 1 and 3-6 are kept up to date in the skeleton at every commit, so
// building a request copies nothing. Nothing downstream writes request
// bytes: the llm transport sends the JSON go-openai marshals from the
// request, adding only an explicit "temperature":0 when one was asked for
// (the one documented provider quirk, see llm's transport).
//
// The invariant this guarantees: request N+1's messages begin with request
// N's messages, without N's status (the tail slot of step 7: the status
// message, or the status joined at the end of a user message), followed by
// N's reply, byte for byte, unless a recorded rebuild (compaction, purge,
// new cycle, rollback) came between them.

// skeleton is the message list of the next request without its status:
// steps 1 and 3-6. closed holds the messages no later push can change;
// open, when hasOpen, is the trailing user message, which a following user
// message (or the status) still joins. Building a request writes only the
// spare capacity past closed.
type skeleton struct {
	closed  []openai.ChatCompletionMessage
	open    openai.ChatCompletionMessage
	hasOpen bool
	logged  int // log entries pushed
}

// reset starts the skeleton over from the system message, with room for
// about n more messages.
func (k *skeleton) reset(system openai.ChatCompletionMessage, n int) {
	k.closed = append(make([]openai.ChatCompletionMessage, 0, n+64), system)
	k.open, k.hasOpen, k.logged = openai.ChatCompletionMessage{}, false, 0
}

// scratch returns closed followed by the open message, written into the
// spare capacity past closed, which it keeps at least two messages long
// (growing in amortised steps, so a request never copies the transcript).
func (k *skeleton) scratch() []openai.ChatCompletionMessage {
	if cap(k.closed)-len(k.closed) < 2 {
		k.closed = slices.Grow(k.closed, len(k.closed)/4+16)
	}
	out := k.closed
	if k.hasOpen {
		out = append(out, k.open)
	}
	return out
}

// push appends one wire message (step 6).
func (k *skeleton) push(w openai.ChatCompletionMessage) {
	all := llm.AppendJoined(k.scratch(), w)
	if n := len(all); n > 1 && all[n-1].Role == openai.ChatMessageRoleUser {
		k.closed, k.open, k.hasOpen = all[:n-1], all[n-1], true
		return
	}
	k.closed, k.hasOpen = all, false
}

// messages returns the request's messages with tail (the status of step
// 7) pushed at the end, or without one when tail is nil. The result
// shares memory with the skeleton and is valid until the next push.
func (k *skeleton) messages(tail *openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := k.scratch()
	if tail != nil {
		out = llm.AppendJoined(out, *tail)
	}
	return out
}

// resetPrefix recomputes steps 1 and 2 (the prefix zone, its token count
// and fingerprint) from the stored system prompt and the tool registry,
// and rebuilds the skeleton from the log.
func (s *Session) resetPrefix() {
	s.catalog = toOpenAITools(s.tools.Catalog())
	s.system = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: s.st.System}
	b, _ := json.Marshal(s.catalog)
	s.prefixTok = transcript.WireTokens(s.system, tokens.Count) + tokens.Count(string(b))
	s.fp = prompt.Fingerprints(s.st.System, s.st.Spans, s.catalog)
	if s.sentFP.Combined == "" {
		// The prefix a reopened session last sent is the one it has now.
		s.sentFP, s.sentSystem = s.fp, s.st.System
	}
	s.skel.reset(s.system, s.log.Len())
	s.syncSkeleton()
}

// syncSkeleton pushes the log entries appended since the last call (steps
// 3-6).
func (s *Session) syncSkeleton() {
	for ; s.skel.logged < s.log.Len(); s.skel.logged++ {
		s.skel.push(s.log.At(s.skel.logged).Wire)
	}
}

func toOpenAITools(specs []tool.Spec) []openai.Tool {
	out := make([]openai.Tool, 0, len(specs))
	for _, sp := range specs {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: sp.Name, Description: sp.Description, Parameters: sp.Parameters,
		}})
	}
	return out
}

// replayWire returns the log's wire messages of step 3, one per entry and
// not yet joined, for the side requests that replay the conversation so
// the provider's prefix cache serves them: the compaction summary and the
// hand-off brief. They send them after this session's system prompt and
// tool catalog and join them, with their instruction, by the same rule
// (llm.JoinUserRuns), so their bytes equal a turn request's up to the
// instruction.
func (s *Session) replayWire() []openai.ChatCompletionMessage { return s.log.AppendWire(nil) }

// assemble returns the request: the prefix zone, the skeleton and, unless
// status is "", the status block at the tail (step 7, tail mode). It
// shares memory with the session and is valid only until the next commit.
func (s *Session) assemble(status string) llm.Request {
	var tail *openai.ChatCompletionMessage
	if status != "" {
		tail = &openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: status}
	}
	return llm.Request{Model: s.cfg.ModelName, Messages: s.skel.messages(tail), Tools: s.catalog}
}

// request returns the request without a status block (see assemble).
func (s *Session) request() llm.Request { return s.assemble("") }

// nextRequest renders and records the status of the coming request,
// places it (step 7) and returns the request to send.
func (s *Session) nextRequest() (llm.Request, error) {
	s.syncMCP() // MCP tools that arrived since the last request (booked)
	// The state is computed once per request (it reads .git/HEAD), and
	// whether the last block is still in the log is looked up once.
	cur := s.canonical(0)
	inLog := s.cfg.StatusMode != StatusTail && s.st.LastStatus != nil && s.lastStatusInLog()
	if s.cfg.StatusMode == StatusOnChange && !s.statusChanged(cur, inLog) {
		return s.request(), nil // the newest block in the log is current
	}
	rec := s.statusFor(cur, inLog)
	data, _ := json.Marshal(rec)
	audit := func(tx *storage.Tx) error {
		_, err := tx.AddRecord(storage.KindStatus, s.meta.ID, data)
		return err
	}
	if s.cfg.StatusMode == StatusAppend || s.cfg.StatusMode == StatusOnChange {
		s.st.LastStatus = &rec.State
		s.turn.statusTurn = true
		m := transcript.Injected(transcript.KindStatus, rec.Text, s.cfg.now())
		if err := s.commit([]transcript.Message{m}, audit); err != nil {
			return llm.Request{}, err
		}
		return s.request(), nil
	}
	if err := s.cfg.Store.Update(func(tx *storage.Tx) error {
		if err := audit(tx); err != nil {
			return err
		}
		return putMeta(tx, s.meta, s.st)
	}); err != nil {
		return llm.Request{}, fmt.Errorf("could not record the status block: %w", err)
	}
	return s.assemble(rec.Text), nil
}

// NextRequest returns the request the model would receive next, as a copy,
// with the status block the first request of the next turn would carry at
// the tail.
func (s *Session) NextRequest() llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var req llm.Request
	if s.cfg.StatusMode == StatusTail {
		req = s.assemble(s.idleStatus())
	} else {
		req = s.request() // the status is in the log
	}
	req.Messages = slices.Clone(req.Messages)
	return req
}
