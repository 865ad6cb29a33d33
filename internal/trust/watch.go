package trust

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Settle is how long after its last change a file must have been left
// alone before its stamp is relied on. A file's change time is kept at the
// filesystem's granularity (a clock tick, or a whole second on some
// filesystems), so a second change within the same tick as the first could
// leave the same stamp; a [Watch] that saw a change time this close to its
// start never reports [Watch.Unchanged].
const Settle = 2 * time.Second

// Watch records every path a reading of workspace files looked at — each
// lookup by its result (a stamp of what was there, or that nothing was),
// each link resolution by where it led — so that [Watch.Unchanged] can
// tell, without reading a file, that a new reading would see the same
// thing. A stamp is a file's device, inode, size, mode, link count,
// modification time and change time; the change time is set by the
// kernel on every write, rename, link, chmod or utimes (`touch -d`
// included) and cannot be set from user space, so no command the agent
// runs can make a changed file look unchanged. Where the change time
// cannot be read, Unchanged is always false. What a stamp cannot show: a
// process that holds a shared writable mapping of a file may change its
// bytes without a new change time until the kernel writes them back
// (never, on tmpfs); such a process can as well change a script between
// any check and its run, which no check before the run guards against. A
// nil *Watch records nothing; its methods then only do the lookup. Its
// methods are safe for concurrent use.
type Watch struct {
	start time.Time

	mu     sync.Mutex
	seen   []seen
	index  map[string]int // op and path → its place in seen
	usable bool           // every lookup gave a stamp that can be relied on
}

// seen is one lookup and what it found.
type seen struct {
	op   byte // 'l' Lstat, 's' Stat, 'e' EvalSymlinks
	path string
	st   stamp  // Lstat, Stat: what was there
	to   string // EvalSymlinks: where it led
	none bool   // nothing was there (or the link led nowhere)
}

// NewWatch starts a record; the lookups made through it from now on are
// what [Watch.Unchanged] checks.
func NewWatch() *Watch { return &Watch{start: time.Now(), usable: stampable} }

// Lstat is [os.Lstat], recorded.
func (w *Watch) Lstat(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	w.add('l', path, fi, err, "")
	return fi, err
}

// Stat is [os.Stat] (links followed), recorded.
func (w *Watch) Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	w.add('s', path, fi, err, "")
	return fi, err
}

// EvalSymlinks is [filepath.EvalSymlinks], recorded by where it led.
func (w *Watch) EvalSymlinks(path string) (string, error) {
	to, err := filepath.EvalSymlinks(path)
	w.add('e', path, nil, err, to)
	return to, err
}

func (w *Watch) add(op byte, path string, fi fs.FileInfo, err error, to string) {
	if w == nil {
		return
	}
	s := seen{op: op, path: path, to: to}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.none = true
	case err != nil:
		w.spoil() // an error that may pass: the result cannot be reused
		return
	case op != 'e':
		st, ok := stampOf(fi)
		if !ok || !st.settled(w.start) {
			w.spoil()
			return
		}
		s.st = st
	}
	key := string(op) + path
	w.mu.Lock()
	defer w.mu.Unlock()
	if i, ok := w.index[key]; ok {
		// The same lookup twice is kept once; two answers mean it
		// changed while it was read.
		if w.seen[i] != s {
			w.usable = false
		}
		return
	}
	if w.index == nil {
		w.index = map[string]int{}
	}
	w.index[key] = len(w.seen)
	w.seen = append(w.seen, s)
}

func (w *Watch) spoil() {
	w.mu.Lock()
	w.usable = false
	w.mu.Unlock()
}

// Spoil marks the record as not to be relied on, for a reading that
// failed or looked at something it could not record.
func (w *Watch) Spoil() {
	if w != nil {
		w.spoil()
	}
}

// Unchanged reports whether every lookup recorded would find the same
// thing now: the same stamp, the same absence, the same link target. It
// is false on a nil *Watch, on a platform without change times, and when
// a recorded stamp was too fresh to rely on (see [Settle]) or a lookup
// failed with anything but "does not exist". It reads no file, only the
// metadata of each path recorded.
func (w *Watch) Unchanged() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	usable, list := w.usable, w.seen
	w.mu.Unlock()
	if !usable {
		return false
	}
	for _, s := range list {
		if !s.holds() {
			return false
		}
	}
	return true
}

// holds reports whether s's lookup finds the same now.
func (s seen) holds() bool {
	var fi fs.FileInfo
	var err error
	switch s.op {
	case 'e':
		var to string
		if to, err = filepath.EvalSymlinks(s.path); err == nil {
			return !s.none && to == s.to
		}
		return s.none && errors.Is(err, fs.ErrNotExist)
	case 'l':
		fi, err = os.Lstat(s.path)
	default:
		fi, err = os.Stat(s.path)
	}
	if err != nil {
		return s.none && errors.Is(err, fs.ErrNotExist)
	}
	st, ok := stampOf(fi)
	return ok && !s.none && st == s.st
}

// stamp identifies one version of a file, folder or link.
type stamp struct {
	dev, ino, nlink uint64
	size            int64
	mode            fs.FileMode
	mtime, ctime    int64 // nanoseconds since 1970
}

// settled reports whether the last change st records is older than
// Settle before start (a change time after start is not).
func (st stamp) settled(start time.Time) bool {
	return st.ctime < start.Add(-Settle).UnixNano()
}
