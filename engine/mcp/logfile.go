package mcp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultLogLimit caps a server's stderr log file, in bytes. When the file
// would grow past it, it is moved to "<name>.1" (replacing an older one) and
// a new file is started, so at most twice the limit is kept per server.
const DefaultLogLimit = 1 << 20

// maxLastLine bounds the last stderr line kept for status reasons.
const maxLastLine = 300

// stderrLog receives a server's stderr: it appends to a size-capped file
// (when a path is set) and remembers the last non-empty line for status
// messages. It never fails a write, so a full disk cannot stall a server.
type stderrLog struct {
	path  string
	limit int64

	mu   sync.Mutex
	f    *os.File
	size int64
	part []byte // the current unfinished line
	last string // the last complete non-empty line
}

func newStderrLog(path string, limit int64) *stderrLog {
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	return &stderrLog{path: path, limit: limit}
}

// Write implements io.Writer; it always reports success.
func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remember(p)
	l.appendFile(p)
	return len(p), nil
}

// appendFile writes p to the file, rotating it first when p would pass the
// limit. The caller holds l.mu.
func (l *stderrLog) appendFile(p []byte) {
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
func (l *stderrLog) rotate(n int64) {
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

func (l *stderrLog) remember(p []byte) {
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(l.part[:i])); line != "" {
			l.last = cut(line, maxLastLine)
		}
		l.part = l.part[i+1:]
	}
	if len(l.part) > maxLastLine {
		l.part = l.part[len(l.part)-maxLastLine:]
	}
}

// Note appends a line written by Tally itself (a start, an exit) to the log.
func (l *stderrLog) Note(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.appendFile([]byte("[tally] " + line + "\n"))
}

// LastLine returns the last non-empty line the server wrote to stderr.
func (l *stderrLog) LastLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if line := strings.TrimSpace(string(l.part)); line != "" {
		return cut(line, maxLastLine)
	}
	return l.last
}

// Close closes the file; later writes reopen it.
func (l *stderrLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
