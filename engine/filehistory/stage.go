package filehistory

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// stage keeps the compressed content a shell snapshot read that is not in
// the store (see Workspace.stage): in a temporary file beside the data
// file, unlinked at once where the system allows, so that the snapshot of a
// big workspace does not sit in memory; only an index of SHA-256 to offset
// is. Content that could not be written there is kept in memory instead.
// Its methods are safe for concurrent use.
type stage struct {
	mu   sync.Mutex
	dir  string
	f    *os.File
	name string // path of f where it could not be unlinked
	size int64  // bytes written to f, and then buf
	buf  []byte // written to f at size-len(buf) when full
	idx  map[[32]byte]span
	mem  map[[32]byte][]byte
	// next is the file size at which unreferenced content is dropped
	// (see compact).
	next int64
}

type span struct {
	off int64
	n   uint32
}

const stageCompactMin = 64 << 20

func newStage(dir string) *stage {
	return &stage{dir: dir, idx: map[[32]byte]span{}, mem: map[[32]byte][]byte{}, next: stageCompactMin}
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

// put keeps data, the compressed content with SHA-256 sum.
func (s *stage) put(sum [32]byte, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.idx[sum]; ok {
		return
	}
	if _, ok := s.mem[sum]; ok {
		return
	}
	if s.open() {
		s.idx[sum] = span{off: s.size, n: uint32(len(data))}
		s.size += int64(len(data))
		s.buf = append(s.buf, data...)
		if len(s.buf) >= 1<<20 {
			s.flush()
		}
		return
	}
	s.mem[sum] = append([]byte(nil), data...)
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
				s.mem[sum] = append([]byte(nil), s.buf[sp.off-start:sp.off-start+int64(sp.n)]...)
				delete(s.idx, sum)
			}
		}
	}
	s.buf = s.buf[:0]
}

// get returns the compressed content with SHA-256 sum.
func (s *stage) get(sum [32]byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.mem[sum]; ok {
		return b, true
	}
	sp, ok := s.idx[sum]
	if !ok {
		return nil, false
	}
	buf := make([]byte, sp.n)
	if start := s.size - int64(len(s.buf)); sp.off >= start {
		copy(buf, s.buf[sp.off-start:])
		return buf, true
	}
	if _, err := s.f.ReadAt(buf, sp.off); err != nil {
		return nil, false
	}
	return buf, true
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

// compact keeps only the content live reports as needed, copying it into a
// new spill file. It runs when the file has doubled since the last time, so
// its cost is spread over the content written.
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
	old, oldName, oldIdx := s.f, s.name, s.idx
	s.f, s.name, s.idx, s.size = nil, "", map[[32]byte]span{}, 0
	buf := []byte{}
	for sum, sp := range oldIdx {
		if !live(sum) {
			continue
		}
		buf = append(buf[:0], make([]byte, sp.n)...)
		if _, err := old.ReadAt(buf, sp.off); err != nil {
			continue
		}
		if s.open() {
			s.idx[sum] = span{off: s.size, n: sp.n}
			s.size += int64(sp.n)
			s.buf = append(s.buf, buf...)
			if len(s.buf) >= 1<<20 {
				s.flush()
			}
			continue
		}
		s.mem[sum] = append([]byte(nil), buf...)
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
