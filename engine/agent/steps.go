package agent

import (
	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/transcript"
)

// requester assembles the requests of one conversation: the session's turn
// or a sub-agent. Both own one and build every request through the same
// ordered steps (requestSteps), so the rules that decide the bytes of a
// request exist once.
//
// It holds the prefix (system message and tool catalog, with the
// catalog's encoding), the conversation's log, and the skeleton, which
// keeps the log's wire messages, joined, with their encodings, so a request
// copies nothing and encodes only what is new since the last one.
type requester struct {
	log      *transcript.AppendLog
	system   chat.Message
	catalog  []chat.Tool
	toolsEnc []byte // chat.EncodeTools of catalog, or nil to encode it per request
	skel     skeleton
	stale    bool // the prefix changed: the skeleton starts over at the next request
}

// setPrefix sets the prefix zone (the system prompt and the tool catalog)
// and returns the catalog's encoding (nil when a tool's schema is not
// valid JSON, so that each request encodes it and fails saying which).
// The skeleton starts over at the next request.
func (r *requester) setPrefix(system string, tools []chat.Tool) []byte {
	r.system = chat.Message{Role: chat.RoleSystem, Content: system}
	r.catalog = tools
	r.toolsEnc, _ = chat.EncodeTools(tools)
	r.stale = true
	return r.toolsEnc
}

// draft is a request being assembled: what the steps read and write.
type draft struct {
	model  string
	status string // the status block for the tail, or "" for none
	msgs   []chat.Message
	enc    [][]byte
	req    llm.Request
}

// requestStep is one named step of request assembly.
type requestStep struct {
	name string
	run  func(*requester, *draft)
}

// requestSteps are the steps of every request, the turn's and every
// sub-agent's, in the order they run. The history rules of the log's
// WireRules (<turn_meta> folding, tool-result references, images) were
// applied when each entry was appended, so the log step copies its bytes.
// Consecutive user messages are joined by llm.AppendJoined wherever a
// message is pushed (the log and status steps).
var requestSteps = []requestStep{
	{"prefix", (*requester).stepPrefix},
	{"log", (*requester).stepLog},
	{"status", (*requester).stepStatus},
	{"encodings", (*requester).stepEncodings},
}

// testHookStep, when set (only by tests, before any session runs), is
// called with each step's name as it runs.
var testHookStep func(step string)

// assemble returns the next request for model, with status at the tail
// unless it is "". The result shares memory with the requester and is
// valid until the conversation's next commit.
func (r *requester) assemble(model, status string) llm.Request {
	d := draft{model: model, status: status}
	for _, st := range requestSteps {
		if testHookStep != nil {
			testHookStep(st.name)
		}
		st.run(r, &d)
	}
	return d.req
}

// stepPrefix: the system message at index 0 and the tool catalog. When
// they changed, the skeleton starts over from the new system message.
func (r *requester) stepPrefix(*draft) {
	if r.stale {
		r.skel.reset(r.system, r.log.Len())
		r.stale = false
	}
}

// stepLog: the log entries appended since the last request, each with
// the wire bytes the log rendered when it was appended, pushed (and
// joined) onto the skeleton.
func (r *requester) stepLog(*draft) {
	for ; r.skel.logged < r.log.Len(); r.skel.logged++ {
		e := r.log.At(r.skel.logged)
		r.skel.push(e.Wire, e.Bytes)
	}
}

// stepStatus: the status block at the very end, pushed like a message (so
// it joins a trailing user message) into the spare capacity past the
// skeleton, which is never written.
func (r *requester) stepStatus(d *draft) {
	var tail *chat.Message
	if d.status != "" {
		tail = &chat.Message{Role: chat.RoleUser, Content: d.status}
	}
	d.msgs, d.enc = r.skel.messages(tail)
}

// stepEncodings: the request, carrying the messages' and the catalog's
// cached encodings for the body.
func (r *requester) stepEncodings(d *draft) {
	d.req = llm.Request{Model: d.model, Messages: d.msgs, Tools: r.catalog,
		Encoded: llm.CachedEncodings(d.msgs, d.enc, r.catalog, r.toolsEnc)}
}
