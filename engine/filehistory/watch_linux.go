//go:build linux

package filehistory

import (
	"errors"
	"path"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher tells which paths changed under the directories it watches, with
// inotify, read synchronously. The kernel queues an event before the system
// call that caused it returns, so once a command has exited, reading the
// descriptor until it has nothing more (EAGAIN) yields every change the
// command made through those directories. That barrier is why this uses
// the system calls directly: a library that reads events on a goroutine of
// its own (fsnotify) has no way to say that it has delivered everything
// the kernel queued up to now.
type watcher struct {
	mu    sync.Mutex
	fd    int // -1 once closed
	paths map[int32]string
	wds   map[string]int32
	used  atomic.Uint64
	buf   []byte
}

const watchSupported = true

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF |
	unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// errWatchLimit means the system's limit on inotify watches was reached.
var errWatchLimit = errors.New("the inotify watch limit was reached")

// maxWatchers bounds the inotify instances a process holds (the system
// allows 128 per user by default, shared with every other program): past
// it, the least recently used watcher is closed, and its workspace walks
// again at its next snapshot.
const maxWatchers = 8

var (
	watchersMu sync.Mutex
	watchers   []*watcher
	watchClock atomic.Uint64
)

func newWatcher() (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wt := &watcher{fd: fd, paths: map[int32]string{}, wds: map[string]int32{}, buf: make([]byte, 64<<10)}
	wt.used.Store(watchClock.Add(1))
	watchersMu.Lock()
	defer watchersMu.Unlock()
	for len(watchers) >= maxWatchers {
		oldest := 0
		for i, o := range watchers {
			if o.used.Load() < watchers[oldest].used.Load() {
				oldest = i
			}
		}
		watchers[oldest].closeFD()
		watchers = append(watchers[:oldest], watchers[oldest+1:]...)
	}
	watchers = append(watchers, wt)
	return wt, nil
}

// add watches the directory abs, known as the workspace path rel.
func (wt *watcher) add(abs, rel string) error {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.fd < 0 {
		return errors.New("the watcher was closed")
	}
	wd, err := unix.InotifyAddWatch(wt.fd, abs, watchMask)
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			return errWatchLimit
		}
		return err
	}
	if old, ok := wt.paths[int32(wd)]; ok && old != rel {
		delete(wt.wds, old) // the same directory, moved
	}
	wt.paths[int32(wd)] = rel
	wt.wds[rel] = int32(wd)
	return nil
}

// remove stops watching the directory rel.
func (wt *watcher) remove(rel string) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wd, ok := wt.wds[rel]
	if !ok {
		return
	}
	delete(wt.wds, rel)
	delete(wt.paths, wd)
	if wt.fd >= 0 {
		_, _ = unix.InotifyRmWatch(wt.fd, uint32(wd))
	}
}

// drain calls fn with every path an event named since the last drain (a
// directory's own path for events about the directory itself). It returns
// false when events were lost (the queue overflowed) or the watcher was
// closed: the caller must then walk the whole workspace.
func (wt *watcher) drain(fn func(rel string)) bool {
	wt.used.Store(watchClock.Add(1))
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.fd < 0 {
		return false
	}
	ok := true
	for {
		n, err := unix.Read(wt.fd, wt.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) || n == 0 {
			return ok
		}
		if err != nil {
			return false
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&wt.buf[off]))
			nameLen := int(ev.Len)
			end := off + unix.SizeofInotifyEvent + nameLen
			if end > n {
				return false
			}
			name := wt.buf[off+unix.SizeofInotifyEvent : end]
			off = end
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				ok = false
				continue
			}
			dir, known := wt.paths[ev.Wd]
			if !known {
				continue // a watch removed since
			}
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				// The directory went away (or was unmounted).
				delete(wt.paths, ev.Wd)
				if wt.wds[dir] == ev.Wd {
					delete(wt.wds, dir)
				}
			}
			switch {
			case len(name) > 0:
				fn(path.Join(dir, string(name)))
			case dir != "":
				fn(dir)
			}
		}
	}
}

func (wt *watcher) closeFD() {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.fd >= 0 {
		unix.Close(wt.fd)
		wt.fd = -1
	}
}

// close closes the inotify descriptor.
func (wt *watcher) close() {
	if wt == nil {
		return
	}
	watchersMu.Lock()
	for i, o := range watchers {
		if o == wt {
			watchers = append(watchers[:i], watchers[i+1:]...)
			break
		}
	}
	watchersMu.Unlock()
	wt.closeFD()
}
