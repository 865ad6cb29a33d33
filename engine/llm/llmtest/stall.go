package llmtest

import (
	"context"
	"encoding/json"
	"net/http"
)

// Faults that leave the client waiting instead of failing, for testing
// client timeouts. A stalled answer lasts until the client goes away or
// the server is closed. Their values are far from the other faults', so
// Fault.String prints them as "Fault(100)" and up.
const (
	// FaultStall accepts the request and never answers: no status line,
	// no headers, no body. It is recorded with Status 0.
	FaultStall Fault = 100 + iota
	// FaultStallAfterHeaders answers HTTP 200 with the headers of a
	// stream and then sends nothing.
	FaultStallAfterHeaders
	// FaultStallAfterRole answers HTTP 200, sends the role-only first
	// chunk (no text) and then nothing.
	FaultStallAfterRole
	// FaultStallAfterContent answers HTTP 200, sends the first piece of the
	// reply's content (or "…" when it has none) and then nothing.
	FaultStallAfterContent
)

// isStall reports whether f is one of the stall faults.
func isStall(f Fault) bool {
	return f >= FaultStall && f <= FaultStallAfterContent
}

// stall writes as much of the answer as the stall fault asks for and then
// waits until ctx (the request) is done or the server closes.
func (a *answer) stall(ctx context.Context, w http.ResponseWriter, closing <-chan struct{}) {
	if a.reply.Fault != FaultStall {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		send := func(c chunkJSON) {
			b, err := json.Marshal(c)
			if err == nil {
				_, _ = w.Write([]byte("data: " + string(b) + "\n\n"))
			}
		}
		empty := ""
		switch a.reply.Fault {
		case FaultStallAfterRole:
			send(a.chunk(deltaJSON{Role: "assistant", Content: &empty}, nil))
		case FaultStallAfterContent:
			send(a.chunk(deltaJSON{Role: "assistant", Content: &empty}, nil))
			first := "…"
			if a.reply.Content != "" {
				first = pieces(a.reply.Content, pieceBytes)[0]
			}
			send(a.chunk(deltaJSON{Content: &first}, nil))
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	select {
	case <-ctx.Done():
	case <-closing:
		if a.reply.Fault == FaultStall {
			// Returning would make net/http send an empty 200 answer;
			// drop the connection instead.
			abort(w)
		}
	}
}

// abort closes the client connection without writing anything more.
func abort(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
