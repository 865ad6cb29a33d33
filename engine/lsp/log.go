package lsp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/internal/text"
)

// LogLimit caps a server's log file, in bytes: when it would grow past
// it, it is moved to "<name>.log.1" (replacing an older one) and a new
// file is started, so at most twice the limit is kept per server.
const LogLimit = 2 << 20

// maxLastLine bounds the last error line kept for a status reason.
const maxLastLine = 300

// maxPartial bounds an unfinished line held back until its end.
const maxPartial = 64 << 10

// serverLog receives a server's stderr, its window/logMessage lines and
// Tally's own notes. It appends them, with secrets redacted, to a capped
// file when it has a path, and remembers the last stderr line for status
// reasons. It never fails a write, so a full disk cannot stall a server.
type serverLog struct {
	path string

	mu   sync.Mutex
	f    *os.File
	size int64
	part []byte
	last string
}

func newServerLog(path string) *serverLog { return &serverLog{path: path} }

// Write takes stderr output; it always reports success.
func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.lineLocked(string(l.part[:i]))
		l.part = l.part[i+1:]
	}
	if len(l.part) > maxPartial {
		l.lineLocked(string(l.part))
		l.part = nil
	}
	if len(l.part) == 0 {
		l.part = nil
	}
	return len(p), nil
}

// lineLocked records one complete stderr line.
func (l *serverLog) lineLocked(line string) {
	line = redact(line)
	if t := strings.TrimSpace(line); t != "" {
		l.last = text.ClipBytes(t, maxLastLine)
	}
	l.appendLocked(line + "\n")
}

// Note appends a line of Tally's own (a start, an exit, a message the
// server logged) to the file.
func (l *serverLog) Note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := redact(fmt.Sprintf(format, args...))
	l.appendLocked(time.Now().Format("15:04:05.000") + " [tally] " + line + "\n")
}

// LastLine returns the last non-empty line the server wrote to stderr.
func (l *serverLog) LastLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := strings.TrimSpace(string(l.part)); t != "" {
		return text.ClipBytes(redact(t), maxLastLine)
	}
	return l.last
}

// Close writes out an unfinished line and closes the file; a later write
// opens it again.
func (l *serverLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.lineLocked(string(l.part))
		l.part = nil
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// appendLocked writes s to the file, rotating it first when s would pass
// the limit.
func (l *serverLog) appendLocked(s string) {
	if l.path == "" {
		return
	}
	if l.f == nil || l.size+int64(len(s)) > LogLimit {
		l.rotateLocked(int64(len(s)))
	}
	if l.f != nil {
		n, _ := l.f.WriteString(s)
		l.size += int64(n)
	}
}

func (l *serverLog) rotateLocked(n int64) {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	if fi, err := os.Stat(l.path); err == nil && fi.Size()+n > LogLimit {
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

// redact replaces the secrets in s by markers: a server's output may echo
// a token, and reasons reach the UI and the model.
func redact(s string) string {
	out, _ := secrets.Redact(s)
	return out
}
