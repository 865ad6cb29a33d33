// Package serverlog is the log of a program Tally runs for a long time (an
// MCP server, a language server): its stderr goes to a size-capped file,
// line by line with secrets redacted, and the last line is kept for the
// program's status. A write never fails, so a full disk cannot stall the
// program.
package serverlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/internal/text"
)

// DefaultLimit caps a log file, in bytes. When the file would grow past
// it, it is moved to "<name>.1" (replacing an older one) and a new file is
// started, so at most twice the limit is kept per program.
const DefaultLimit = 1 << 20

// maxLastLine bounds the last stderr line kept for status reasons.
const maxLastLine = 300

// maxPartial bounds the unfinished stderr line held back until its end, so
// that it is redacted whole; a longer line is written out in pieces.
const maxPartial = 64 << 10

// Log receives a program's stderr: it appends to a size-capped file
// (when a path is set) and remembers the last non-empty line for status
// messages. Both see the text with its secrets redacted (see
// [secrets.Redact]), line by line: a server's error output may echo its
// token, and the status reaches events, the UI and --json output. It never
// fails a write, so a full disk cannot stall a server.
type Log struct {
	path  string
	limit int64

	mu   sync.Mutex
	f    *os.File
	size int64
	part []byte // the current unfinished line
	last string // the last complete non-empty line
}

// New returns the log writing to path ("" keeps only the last line),
// capped at limit bytes (0 means DefaultLimit).
func New(path string, limit int64) *Log {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Log{path: path, limit: limit}
}

// Write implements io.Writer; it always reports success.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		line := redact(string(l.part[:i]))
		if t := strings.TrimSpace(line); t != "" {
			l.last = text.ClipBytes(t, maxLastLine)
		}
		l.appendFile([]byte(line + "\n"))
		l.part = l.part[i+1:]
	}
	if len(l.part) > maxPartial {
		l.appendFile([]byte(redact(string(l.part))))
		l.part = l.part[:0]
	}
	if len(l.part) == 0 {
		l.part = nil // let a large chunk's backing array go
	}
	return len(p), nil
}

// redact replaces the secrets in s by markers.
func redact(s string) string {
	out, _ := secrets.Redact(s)
	return out
}

// appendFile writes p to the file, rotating it first when p would pass the
// limit. The caller holds l.mu.
func (l *Log) appendFile(p []byte) {
	if l.path == "" {
		return
	}
	if l.f == nil || l.size+int64(len(p)) > l.limit {
		l.rotate(int64(len(p)))
	}
	if l.f != nil {
		n, _ := l.f.Write(p)
		l.size += int64(n)
	}
}

// rotate opens the log file for appending, first moving it aside when it
// cannot take another n bytes.
func (l *Log) rotate(n int64) {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	if fi, err := os.Stat(l.path); err == nil && fi.Size()+n > l.limit {
		_ = os.Rename(l.path, l.path+".1")
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	l.size = 0
	if fi, err := f.Stat(); err == nil {
		l.size = fi.Size()
	}
	l.f = f
}

// Path is the log file's path, "" when only the last line is kept.
func (l *Log) Path() string { return l.path }

// Note appends a line written by Tally itself (a start, an exit) to the
// log, marked "[tally]" and redacted.
func (l *Log) Note(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.appendFile([]byte("[tally] " + redact(line) + "\n"))
}

// LastLine returns the last non-empty line the program wrote to stderr,
// redacted and cut to 300 bytes.
func (l *Log) LastLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if line := strings.TrimSpace(string(l.part)); line != "" {
		return text.ClipBytes(redact(line), maxLastLine)
	}
	return l.last
}

// Close writes out the unfinished line and closes the file; later writes
// reopen it.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		line := redact(string(l.part))
		if t := strings.TrimSpace(line); t != "" {
			l.last = text.ClipBytes(t, maxLastLine)
		}
		l.appendFile([]byte(line + "\n"))
		l.part = nil
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
