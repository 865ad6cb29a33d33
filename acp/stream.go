package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// ledger counts the client's requests read and the responses written, so
// that when the client's stream ends every request it sent still gets its
// answer (a client may write its requests and close its end at once). It
// also runs what waits for the answer that opened a session to be written
// (see afterOpened).
type ledger struct {
	mu        sync.Mutex
	requests  int
	responses int
	changed   chan struct{} // closed and replaced on every change

	opened  map[string][]func() // by session ID: run once its opening answer is out
	opening map[string]string   // a load or resume request's ID → the session it opens
	// booleans says the client's initialize advertised boolean config
	// options (clientCapabilities.session.configOptions.boolean), which
	// the Go SDK's types do not carry.
	booleans bool
}

func newLedger() *ledger {
	return &ledger{changed: make(chan struct{}), opened: map[string][]func(){}, opening: map[string]string{}}
}

// afterOpened runs fn, on a goroutine of its own, once the answer to the
// request that opened session id (session/new, load or resume) has been
// written: the client knows the session only then, so an update sent
// sooner could be dropped. The caller is that request's handler.
func (l *ledger) afterOpened(id string, fn func()) {
	l.mu.Lock()
	l.opened[id] = append(l.opened[id], fn)
	l.mu.Unlock()
}

// answered is told of every response written: its request's ID and the
// session ID its result names, if any.
func (l *ledger) answered(reqID, session string) {
	l.mu.Lock()
	if sid, ok := l.opening[reqID]; ok {
		delete(l.opening, reqID)
		if session == "" {
			session = sid
		}
	}
	fns := l.opened[session]
	delete(l.opened, session)
	l.mu.Unlock()
	for _, fn := range fns {
		go fn()
	}
}

// reading is told of every request read: a load or resume request names
// the session its answer opens.
func (l *ledger) reading(m rpcMessage) {
	if m.Method == acp.AgentMethodInitialize {
		var p struct {
			Caps struct {
				Session *struct {
					ConfigOptions *struct {
						Boolean json.RawMessage `json:"boolean"`
					} `json:"configOptions"`
				} `json:"session"`
			} `json:"clientCapabilities"`
		}
		_ = json.Unmarshal(m.Params, &p) // a malformed one is the SDK's to refuse
		s := p.Caps.Session
		on := s != nil && s.ConfigOptions != nil && len(s.ConfigOptions.Boolean) > 0 && string(s.ConfigOptions.Boolean) != "null"
		l.mu.Lock()
		l.booleans = on
		l.mu.Unlock()
		return
	}
	if m.Method != acp.AgentMethodSessionLoad && m.Method != acp.AgentMethodSessionResume {
		return
	}
	if sid := m.session(m.Params); sid != "" {
		l.mu.Lock()
		l.opening[string(m.ID)] = sid
		l.mu.Unlock()
	}
}

// booleanOptions reports whether the client takes boolean config options.
func (l *ledger) booleanOptions() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.booleans
}

func (l *ledger) add(requests, responses int) {
	l.mu.Lock()
	l.requests += requests
	l.responses += responses
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// settled reports whether every request read so far was answered, and a
// channel closed at the next change.
func (l *ledger) settled() (bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.responses >= l.requests, l.changed
}

// wait returns once every request was answered or after limit.
func (l *ledger) wait(limit time.Duration) {
	deadline := time.After(limit)
	for {
		ok, changed := l.settled()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			return
		}
	}
}

// rpcMessage is what the stream looks at in a JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// session is the sessionId member of raw, a request's params or a
// response's result, or "".
func (rpcMessage) session(raw json.RawMessage) string {
	var v struct {
		SessionID string `json:"sessionId"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.SessionID
}

// kind tells a JSON-RPC request (an ID and a method) and a response (an
// ID and no method) apart; anything else is neither.
func kind(line []byte) (m rpcMessage, request, response bool) {
	// An ID of null is none: the connection takes such a request for a
	// notification, and a parse error's answer carries it.
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return m, false, false
	}
	return m, m.Method != "", m.Method == ""
}

// countingWriter counts the responses written through it, one message a
// line, and writes one message at a time.
type countingWriter struct {
	mu *sync.Mutex
	w  io.Writer
	l  *ledger
}

func newCountingWriter(w io.Writer, l *ledger) countingWriter {
	return countingWriter{mu: new(sync.Mutex), w: w, l: l}
}

func (c countingWriter) Write(p []byte) (int, error) {
	out := scoped(p) // the connection writes one message at a time
	c.mu.Lock()
	n, err := c.w.Write(out)
	c.mu.Unlock()
	if n == len(out) {
		n = len(p)
	} else {
		n = min(n, len(p))
	}
	responses := 0
	for line := range bytes.Lines(p[:n]) {
		if m, _, resp := kind(line); resp {
			responses++
			c.l.answered(string(m.ID), m.session(m.Result))
		}
	}
	if responses > 0 {
		c.l.add(0, responses)
	}
	return n, err
}

// maxLine bounds one message from the client, as the connection does.
const maxLine = 10 << 20

// parseError is the answer to a line that is not one JSON-RPC message.
var parseError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the line is not a JSON-RPC message object; send one JSON object a line"}}` + "\n")

// pump copies the client's stream to w line by line, counting requests;
// a line that is not a JSON object is answered on out with a parse error
// instead. It returns when in ends and closes nothing.
func pump(in io.Reader, w io.Writer, out io.Writer, l *ledger) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long message: copy it through in pieces; only whole
			// lines are counted.
			buf := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull && len(buf) <= maxLine {
				line, err = r.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && (t[0] != '{' || !json.Valid(t)) {
			out.Write(parseError)
			line = nil
		}
		if len(line) > 0 {
			if m, req, _ := kind(line); req {
				l.reading(m)
				l.add(1, 0)
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}
