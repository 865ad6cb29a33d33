package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// CheckBytes is the largest file Open checks page by page (see checkTree)
// before it returns. The check reads every page in use once and writes
// nothing: BenchmarkOpenCheck measured about 1 ms for a 2 MB file, 10-17
// ms for 20 MB and 120-170 ms for 200 MB on two shared cores, so files up
// to 128 MiB cost at most about a tenth of a second per Open. A larger
// file is checked in the background: reads go on at once, and the first
// write (and Damage) waits for the check, so no write lands in a file
// whose damage was not ruled out.
const CheckBytes = 128 << 20

// checkInline is CheckBytes, lowered by tests of the background check.
var checkInline int64 = CheckBytes

// The bbolt page layout checkTree reads, stable across bbolt versions.
const (
	branchPageFlag = 0x01
	leafPageFlag   = 0x02
	bucketLeafFlag = 0x01
	elemSize       = 16 // a branch or leaf page element
	bucketHdrSize  = 16 // a bucket value: root page and sequence
)

// damagedFile is the error every write to a file that failed checkTree
// returns: what is wrong and how to recover.
func damagedFile(path string, cause error) error {
	return newError(ErrCorrupt, cause, "%s is damaged (%v); Tally will not write to it, so copy out what you need with `tally export SESSION` and then move the file aside or restore a backup", path, cause)
}

// checkTree walks, through plain reads of the file (never bbolt's mapping,
// which trusts every byte and faults or loops on damage), every page
// reachable from the root bucket: each must lie inside the pages in use,
// be a branch or leaf page with its elements and keys inside it and in
// order, be referenced once and not be on the freelist. A page damaged
// past the header, which bbolt only notices (if at all) when a
// transaction reaches it, is found here once per Open, before anything
// can be written on top of it. Files over CheckBytes are not walked.
func checkTree(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // bbolt opened it; nothing to add
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return nil
	}
	m, err := pickMeta(f, info.Size())
	if err != nil {
		return err
	}
	t := &tree{r: f, m: m, ps: uint64(m.pageSize), seen: newPageSet(m.pgid), free: newPageSet(m.pgid)}
	if m.freelist != noFreelist {
		ids, err := checkFreelist(f, m, t.ps)
		if err != nil {
			return err
		}
		for _, id := range ids {
			t.free.add(id)
		}
		var hdr [pageHdrSize]byte
		if _, err := f.ReadAt(hdr[:], int64(m.freelist*t.ps)); err != nil {
			return err
		}
		for i := uint64(0); i <= uint64(binary.NativeEndian.Uint32(hdr[12:])); i++ {
			t.seen.add(m.freelist + i)
		}
	}
	stack := []uint64{m.root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids, err := t.page(id)
		if err != nil {
			return err
		}
		stack = append(stack, kids...)
	}
	return nil
}

// tree is the state of one checkTree walk.
type tree struct {
	r    io.ReaderAt
	m    meta
	ps   uint64
	seen pageSet // pages reached so far, overflow included
	free pageSet // pages on the freelist
	buf  []byte  // the page being checked, reused
}

// page checks the page id and returns the pages it refers to.
func (t *tree) page(id uint64) ([]uint64, error) {
	ne := binary.NativeEndian
	if id < 2 || id >= t.m.pgid {
		return nil, fmt.Errorf("a reference to page %d, outside the %d pages in use", id, t.m.pgid)
	}
	var hdr [pageHdrSize]byte
	if _, err := t.r.ReadAt(hdr[:], int64(id*t.ps)); err != nil {
		return nil, fmt.Errorf("page %d cannot be read (%w)", id, err)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if ne.Uint64(hdr[0:]) != id || id+overflow >= t.m.pgid {
		return nil, fmt.Errorf("page %d has a damaged header", id)
	}
	for i := id; i <= id+overflow; i++ {
		if t.seen.has(i) {
			return nil, fmt.Errorf("page %d is referenced twice", i)
		}
		if t.free.has(i) {
			return nil, fmt.Errorf("page %d is in use and on the freelist", i)
		}
		t.seen.add(i)
	}
	n := (overflow + 1) * t.ps
	if uint64(cap(t.buf)) < n {
		t.buf = make([]byte, n)
	}
	buf := t.buf[:n]
	if _, err := t.r.ReadAt(buf, int64(id*t.ps)); err != nil {
		return nil, fmt.Errorf("page %d cannot be read (%w)", id, err)
	}
	return t.elements(id, buf, false)
}

// elements checks the elements of the page in buf (page id, or an inline
// bucket's page inside id when inline) and returns the pages they refer
// to.
func (t *tree) elements(id uint64, buf []byte, inline bool) ([]uint64, error) {
	ne := binary.NativeEndian
	if len(buf) < pageHdrSize {
		return nil, fmt.Errorf("an inline bucket on page %d is cut short", id)
	}
	flags, count := ne.Uint16(buf[8:]), int(ne.Uint16(buf[10:]))
	branch := flags&branchPageFlag != 0
	switch {
	case flags != branchPageFlag && flags != leafPageFlag, inline && branch:
		return nil, fmt.Errorf("page %d is not a branch or leaf page (flags %#x)", id, flags)
	case pageHdrSize+count*elemSize > len(buf):
		return nil, fmt.Errorf("page %d claims %d elements, more than fit in it", id, count)
	}
	var kids []uint64
	var prev []byte
	for i := range count {
		at := pageHdrSize + i*elemSize
		e := buf[at : at+elemSize]
		var pos, ksize, vsize int
		if branch {
			pos, ksize = int(ne.Uint32(e[0:])), int(ne.Uint32(e[4:]))
		} else {
			pos, ksize, vsize = int(ne.Uint32(e[4:])), int(ne.Uint32(e[8:])), int(ne.Uint32(e[12:]))
		}
		end := at + pos + ksize + vsize
		if pos < 0 || ksize < 0 || vsize < 0 || end < at || end > len(buf) {
			return nil, fmt.Errorf("element %d of page %d points outside the page", i, id)
		}
		key := buf[at+pos : at+pos+ksize]
		if i > 0 && bytes.Compare(prev, key) >= 0 {
			return nil, fmt.Errorf("the keys of page %d are out of order", id)
		}
		prev = key
		if branch {
			kids = append(kids, ne.Uint64(e[8:]))
			continue
		}
		if ne.Uint32(e[0:])&bucketLeafFlag == 0 {
			continue
		}
		v := buf[at+pos+ksize : end]
		if inline || len(v) < bucketHdrSize {
			return nil, fmt.Errorf("the bucket %q on page %d is damaged", key, id)
		}
		if root := ne.Uint64(v); root != 0 {
			kids = append(kids, root)
			continue
		}
		more, err := t.elements(id, v[bucketHdrSize:], true)
		if err != nil {
			return nil, err
		}
		kids = append(kids, more...)
	}
	return kids, nil
}

// pageSet is a set of page IDs below a high-water mark.
type pageSet []uint64

func newPageSet(pgid uint64) pageSet { return make(pageSet, pgid/64+1) }

func (p pageSet) add(id uint64) {
	if id/64 < uint64(len(p)) {
		p[id/64] |= 1 << (id % 64)
	}
}

func (p pageSet) has(id uint64) bool { return id/64 < uint64(len(p)) && p[id/64]&(1<<(id%64)) != 0 }
