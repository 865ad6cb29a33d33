package llm

import (
	"bytes"
	"fmt"
)

// Defaults for the size caps in Config.
//
// A reply's text is capped at 1 MiB: the largest output budgets of current
// models are about 128k tokens, roughly 512 KiB at four bytes a token, and
// the cap doubles that for non-Latin text and the escaping inside tool-call
// arguments. One tool call's arguments are capped at 512 KiB, which still
// lets the model write a file of several thousand lines in one call.
const (
	DefaultMaxReplyBytes    = 1 << 20
	DefaultMaxToolCallBytes = 512 << 10
)

// MaxToolCalls is the largest number of tool calls one reply may make. No
// model makes more than a few dozen parallel calls; the cap only stops a
// server from growing the call table without bound.
const MaxToolCalls = 256

// Limits on the raw stream, derived from the reply cap so a reply within
// the caps is never cut by them.
const (
	// lineFactor and lineSlack bound one line of the stream: a single event
	// may carry the whole reply, JSON-escaped (at most doubling ordinary
	// text) and wrapped in its envelope.
	lineFactor = 2
	lineSlack  = 64 << 10
	// wireFactor bounds the whole response body: a reply at the cap
	// streamed one token per event, each event wrapped in a verbose
	// envelope of up to ~250 bytes, takes about 64 times its text on the
	// wire. The bound stops a server that streams empty events forever.
	wireFactor = 64
	// maxErrorBody is how much of an error answer (HTTP status 4xx or 5xx)
	// is read; its message is shortened to 300 characters anyway.
	maxErrorBody = 64 << 10
)

// replyLimits are the caps on what the assembler keeps of one reply.
type replyLimits struct {
	reply int // content, reasoning and every tool call's id, name and arguments together
	call  int // one tool call's arguments
}

// wireLimits are the caps on the raw bytes of one streamed response body.
type wireLimits struct {
	line  int64 // one line
	side  int64 // all lines that are not "data:" lines (comments, keep-alives, error text)
	total int64 // the whole body
}

func (l replyLimits) wire() wireLimits {
	r := int64(l.reply)
	return wireLimits{line: lineFactor*r + lineSlack, side: r, total: wireFactor * r}
}

// tooLargeError is a reply stopped at one of the caps.
type tooLargeError struct {
	what   string // what passed which limit
	server bool   // the stream itself was malformed, not the model's answer too long
}

func (e *tooLargeError) Error() string {
	if e.server {
		return fmt.Sprintf("the reply was stopped because %s; check that the base URL points to a well-behaved OpenAI-compatible server", e.what)
	}
	return fmt.Sprintf("the reply was stopped because %s; ask the model for a shorter answer, for example to write a large file in several steps", e.what)
}

func (e *tooLargeError) Unwrap() error { return ErrReplyTooLarge }

// sizeText formats a byte count for people ("512 KiB", "1 MiB", "2.1 MiB").
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// lineScan checks the raw bytes of a stream against wireLimits as they are
// read. It classifies lines the way go-openai's stream reader does (a line
// is a data line when, without leading white space, it starts with
// "data:"), because that reader keeps every other line in memory until the
// stream ends.
type lineScan struct {
	lim         wireLimits
	total, side int64
	line        int64 // bytes of the current line so far
	lead        int64 // bytes of the current line from its first non-space byte
	head        int   // bytes of "data:" matched at the start of the line
	kind        lineKind
}

type lineKind int8

const (
	lineUndecided lineKind = iota
	lineData
	lineOther
)

const dataPrefix = "data:"

// feed accounts for p, the next bytes of the body, and returns a
// *tooLargeError when a limit is passed.
func (s *lineScan) feed(p []byte) error {
	s.total += int64(len(p))
	if s.total > s.lim.total {
		return &tooLargeError{what: fmt.Sprintf("the server sent more than %s for it", sizeText(s.lim.total)), server: true}
	}
	for len(p) > 0 {
		seg, rest, ended := p, []byte(nil), false
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			seg, rest, ended = p[:i], p[i+1:], true
		}
		s.line += int64(len(seg))
		if s.line > s.lim.line {
			return &tooLargeError{what: fmt.Sprintf("one line of the stream passed the %s limit", sizeText(s.lim.line))}
		}
		if s.kind == lineUndecided {
			s.classify(seg)
		} else if s.kind == lineOther {
			s.lead += int64(len(seg))
		}
		if s.kind != lineData && s.side+s.lead > s.lim.side {
			return &tooLargeError{what: fmt.Sprintf("the server sent more than %s of lines that carry no data", sizeText(s.lim.side)), server: true}
		}
		if !ended {
			break
		}
		if s.kind != lineData {
			s.side += s.lead
		}
		s.line, s.lead, s.head, s.kind = 0, 0, 0, lineUndecided
		p = rest
	}
	return nil
}

// classify reads the start of a line until it is known whether it is a
// data line.
func (s *lineScan) classify(seg []byte) {
	for i, b := range seg {
		if s.lead == 0 && isSpaceByte(b) {
			continue
		}
		s.lead++
		if b != dataPrefix[s.head] {
			s.kind = lineOther
			s.lead += int64(len(seg) - i - 1)
			return
		}
		s.head++
		if s.head == len(dataPrefix) {
			s.kind = lineData
			return
		}
	}
}

func isSpaceByte(b byte) bool {
	return b == ' ' || ('\t' <= b && b <= '\r')
}
