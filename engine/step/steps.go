package step

import (
	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// Requester assembles the requests of one conversation: the session's turn
// or a sub-agent. Both own one and build every request through the same
// ordered Steps, so the rules that decide the bytes of a
// request exist once.
//
// It holds the prefix (system message and tool catalog, with the
// catalog's encoding), the conversation's log, and the skeleton, which
// keeps the log's wire messages, joined, with their encodings, so a request
// copies nothing and encodes only what is new since the last one.
type Requester struct {
	// Log is the conversation's log; set it before the first request.
	Log      *transcript.AppendLog
	system   chat.Message
	catalog  []chat.Tool
	toolsEnc []byte // chat.EncodeTools of catalog, or nil to encode it per request
	skel     skeleton
	stale    bool // the prefix changed: the skeleton starts over at the next request
}

// SetPrefix sets the prefix zone (the system prompt and the tool catalog)
// and returns the catalog's encoding (nil when a tool's schema is not
// valid JSON, so that each request encodes it and fails saying which).
// The skeleton starts over at the next request.
func (r *Requester) SetPrefix(system string, tools []chat.Tool) []byte {
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

// Step is one named step of request assembly.
type Step struct {
	Name string
	run  func(*Requester, *draft)
}

// Steps are the steps of every request, the turn's and every
// sub-agent's, in the order they run. The history rules of the log's
// WireRules (<turn_meta> folding, tool-result references, images) were
// applied when each entry was appended, so the log step copies its bytes.
// Consecutive user messages are joined by llm.AppendJoined wherever a
// message is pushed (the log and status steps).
var Steps = []Step{
	{"prefix", (*Requester).stepPrefix},
	{"log", (*Requester).stepLog},
	{"status", (*Requester).stepStatus},
	{"encodings", (*Requester).stepEncodings},
}

// TraceStep, when set (by tests, before any conversation runs), is called
// with each step's name as it runs.
var TraceStep func(step string)

// Assemble returns the next request for model, with status at the tail
// unless it is "". The result shares memory with the requester and is
// valid until the conversation's next commit.
func (r *Requester) Assemble(model, status string) llm.Request {
	d := draft{model: model, status: status}
	for _, st := range Steps {
		if TraceStep != nil {
			TraceStep(st.Name)
		}
		st.run(r, &d)
	}
	return d.req
}

// stepPrefix: the system message at index 0 and the tool catalog. When
// they changed, the skeleton starts over from the new system message.
func (r *Requester) stepPrefix(*draft) {
	if r.stale {
		r.skel.reset(r.system, r.Log.Len())
		r.stale = false
	}
}

// stepLog: the log entries appended since the last request, each with
// the wire bytes the log rendered when it was appended, pushed (and
// joined) onto the skeleton.
func (r *Requester) stepLog(*draft) {
	for ; r.skel.logged < r.Log.Len(); r.skel.logged++ {
		e := r.Log.At(r.skel.logged)
		r.skel.push(e.Wire, e.Bytes)
	}
}

// stepStatus: the status block at the very end, pushed like a message (so
// it joins a trailing user message) into the spare capacity past the
// skeleton, which is never written.
func (r *Requester) stepStatus(d *draft) {
	var tail *chat.Message
	if d.status != "" {
		tail = &chat.Message{Role: chat.RoleUser, Content: d.status}
	}
	d.msgs, d.enc = r.skel.messages(tail)
}

// stepEncodings: the request, carrying the messages' and the catalog's
// cached encodings for the body.
func (r *Requester) stepEncodings(d *draft) {
	d.req = llm.Request{Model: d.model, Messages: d.msgs, Tools: r.catalog,
		Encoded: llm.CachedEncodings(d.msgs, d.enc, r.catalog, r.toolsEnc)}
}

// System is the prefix's system message.
func (r *Requester) System() chat.Message { return r.system }

// Catalog is the prefix's tool catalog.
func (r *Requester) Catalog() []chat.Tool { return r.catalog }

// Tools returns the catalog's specs as the request's tools.
func Tools(specs []tool.Spec) []chat.Tool {
	out := make([]chat.Tool, 0, len(specs))
	for _, sp := range specs {
		out = append(out, chat.Tool{
			Name: sp.Name, Description: sp.Description, Parameters: sp.Parameters,
		})
	}
	return out
}

// ToolCost is what one tool's schema costs in every request's fixed
// prefix, counted as the prefix is counted (tokens.Count of its encoding).
type ToolCost struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// PrefixCost is what the fixed prefix of a request costs: the system
// message, the catalogue (counted whole, as the level counts it) and each
// tool of it.
type PrefixCost struct {
	SystemTokens int        `json:"system_tokens"`
	ToolsTokens  int        `json:"tools_tokens"`
	Total        int        `json:"total"`
	Tools        []ToolCost `json:"tools"`
}

// CostOf counts the fixed prefix of a request with system and tools.
func CostOf(system string, tools []chat.Tool) PrefixCost {
	var c PrefixCost
	c.SystemTokens = transcript.WireTokens(chat.Message{Role: chat.RoleSystem, Content: system}, tokens.Count)
	if enc, err := chat.EncodeTools(tools); err == nil {
		c.ToolsTokens = tokens.Count(string(enc))
	}
	for _, t := range tools {
		if enc, err := chat.EncodeTools([]chat.Tool{t}); err == nil {
			c.Tools = append(c.Tools, ToolCost{Name: t.Name, Tokens: tokens.Count(string(enc))})
		}
	}
	c.Total = c.SystemTokens + c.ToolsTokens
	return c
}
