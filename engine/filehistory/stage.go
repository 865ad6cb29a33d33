package filehistory

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// stage keeps the content a shell snapshot read that is not in the store
// (see Workspace.stage): in a temporary file beside the data file,
// unlinked at once where the system allows, so that the snapshot of a big
// workspace does not sit in memory; only an index of SHA-256 to offset
// is. Content of stageRawBelow bytes or more is kept compressed; smaller
// content as it is. Content that could not be written to the file is kept
// in memory instead. Its methods are safe for concurrent use.
type stage struct {
	mu   sync.Mutex
	dir  string
	f    *os.File
	name string // path of f where it could not be unlinked
	size int64  // bytes written to f, and then buf
	buf  []byte // written to f at size-len(buf) when full
	idx  map[[32]byte]span
	mem  map[[32]byte]kept
	// next is the file size at which unreferenced content is dropped
	// (see compact).
	next int64
}

type span struct {
	off    int64
	n      uint32
	packed bool // compressed
}

// kept is content kept in memory.
type kept struct {
	data   []byte
	packed bool // compressed
}

// stageRawBelow is the size under which content is staged as it is:
// compressing a file of a few kilobytes costs a fixed 10–15 µs whatever
// it saves, which was half the processor time of a first snapshot of
// 100,000 small files. Only the few that a command changes are compressed,
// when they are stored.
const stageRawBelow = 4 << 10

const stageCompactMin = 64 << 20

func newStage(dir string) *stage {
	return &stage{dir: dir, idx: map[[32]byte]span{}, mem: map[[32]byte]kept{}, next: stageCompactMin}
}

func (s *stage) has(sum [32]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.idx[sum]
	if !ok {
		_, ok = s.mem[sum]
	}
	return ok
}

// open makes sure the spill file exists. s.mu must be held.
func (s *stage) open() bool {
	if s.f != nil {
		return true
	}
	if runtime.GOOS == "windows" {
		// Left by processes that ended: a file still open elsewhere
		// cannot be removed there, so only those go.
		old, _ := filepath.Glob(filepath.Join(s.dir, ".tally-snapshot-*"))
		for _, o := range old {
			os.Remove(o)
		}
	}
	f, err := os.CreateTemp(s.dir, ".tally-snapshot-*")
	if err != nil {
		if f, err = os.CreateTemp("", ".tally-snapshot-*"); err != nil {
			return false
		}
	}
	s.f, s.size = f, 0
	if runtime.GOOS == "windows" || os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	return true
}

// put keeps data, the content with SHA-256 sum.
func (s *stage) put(sum [32]byte, data []byte) {
	packed := len(data) >= stageRawBelow
	if packed {
		data = compress(data) // before the lock: readers put in parallel
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.idx[sum]; ok {
		return
	}
	if _, ok := s.mem[sum]; ok {
		return
	}
	s.keep(sum, data, packed)
}

// keep appends data (compressed when packed) to the file, or keeps it in
// memory when there is no file. s.mu must be held.
func (s *stage) keep(sum [32]byte, data []byte, packed bool) {
	if s.open() {
		s.idx[sum] = span{off: s.size, n: uint32(len(data)), packed: packed}
		s.size += int64(len(data))
		s.buf = append(s.buf, data...)
		if len(s.buf) >= 1<<20 {
			s.flush()
		}
		return
	}
	s.mem[sum] = kept{append([]byte(nil), data...), packed}
}

// flush writes buf to the file; what cannot be written is kept in memory.
// s.mu must be held.
func (s *stage) flush() {
	if len(s.buf) == 0 {
		return
	}
	start := s.size - int64(len(s.buf))
	if _, err := s.f.WriteAt(s.buf, start); err != nil {
		for sum, sp := range s.idx {
			if sp.off >= start {
				s.mem[sum] = kept{append([]byte(nil), s.buf[sp.off-start:sp.off-start+int64(sp.n)]...), sp.packed}
				delete(s.idx, sum)
			}
		}
	}
	s.buf = s.buf[:0]
}

// get returns the content with SHA-256 sum, as it was put.
func (s *stage) get(sum [32]byte) ([]byte, bool) {
	data, _, ok := s.content(sum)
	return data, ok
}

// content returns the content with SHA-256 sum, and its compressed form
// when it was staged compressed (nil when it was staged as it is), so
// that storing it need not compress it again.
func (s *stage) content(sum [32]byte) (data, packed []byte, ok bool) {
	b, isPacked, ok := s.bytes(sum)
	if !ok || !isPacked {
		return b, nil, ok
	}
	data, err := decoder.DecodeAll(b, nil)
	return data, b, err == nil
}

// bytes returns the bytes kept for sum and whether they are compressed.
func (s *stage) bytes(sum [32]byte) ([]byte, bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.mem[sum]; ok {
		return k.data, k.packed, true
	}
	sp, ok := s.idx[sum]
	if !ok {
		return nil, false, false
	}
	buf := make([]byte, sp.n)
	if start := s.size - int64(len(s.buf)); sp.off >= start {
		copy(buf, s.buf[sp.off-start:])
		return buf, sp.packed, true
	}
	if _, err := s.f.ReadAt(buf, sp.off); err != nil {
		return nil, false, false
	}
	return buf, sp.packed, true
}

// forget drops the content with SHA-256 sum from the index (it is stored
// now); its bytes in the file go at the next compaction.
func (s *stage) forget(sum [32]byte) {
	s.mu.Lock()
	delete(s.idx, sum)
	delete(s.mem, sum)
	s.mu.Unlock()
}

// due reports whether the spill file has grown enough to be compacted.
func (s *stage) due() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size > s.next
}

// compact forgets the content live does not report as needed, and copies
// the rest into a new spill file when that frees at least half of the
// file. It runs when the file has doubled since the last time, so its cost
// is spread over the content written.
func (s *stage) compact(live func(sum [32]byte) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.flush()
	}
	for sum := range s.mem {
		if !live(sum) {
			delete(s.mem, sum)
		}
	}
	// Copying is worth it only when most of the file is dead: after a
	// first snapshot all of it is live, and a copy would only write it
	// again.
	var kept int64
	for sum, sp := range s.idx {
		if live(sum) {
			kept += int64(sp.n)
		} else {
			delete(s.idx, sum)
		}
	}
	if s.size-kept < s.size/2 {
		s.next = max(stageCompactMin, 2*s.size)
		return
	}
	old, oldName, oldIdx := s.f, s.name, s.idx
	s.f, s.name, s.idx, s.size = nil, "", map[[32]byte]span{}, 0
	buf := []byte{}
	for sum, sp := range oldIdx {
		buf = append(buf[:0], make([]byte, sp.n)...)
		if _, err := old.ReadAt(buf, sp.off); err != nil {
			continue
		}
		s.keep(sum, buf, sp.packed)
	}
	if s.f != nil {
		s.flush()
	}
	if old != nil {
		old.Close()
		if oldName != "" {
			os.Remove(oldName)
		}
	}
	s.next = max(stageCompactMin, 2*s.size)
}
