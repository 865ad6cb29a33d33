package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

// sdkLog is the slog handler of the SDK's client for one server: its
// warnings and errors (a tool left out of the list because its
// x-mcp-header annotations are invalid, for one) are noted in the
// server's log, redacted and on one line; the rest is dropped.
type sdkLog struct {
	s     *server
	attrs []slog.Attr
}

// Enabled implements slog.Handler.
func (h sdkLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// Handle implements slog.Handler.
func (h sdkLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("the MCP client: " + r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.s.log.Note(redact(text.OneLine(b.String(), 500)))
	return nil
}

// WithAttrs implements slog.Handler.
func (h sdkLog) WithAttrs(as []slog.Attr) slog.Handler {
	h.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], as...)
	return h
}

// WithGroup implements slog.Handler; groups are flattened.
func (h sdkLog) WithGroup(string) slog.Handler { return h }
