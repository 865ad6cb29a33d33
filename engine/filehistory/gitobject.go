package filehistory

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// gitObjects reads objects from a repository's object directories: loose
// objects and pack files (with their deltas), read only.
type gitObjects struct {
	dirs  []string
	packs []*gitPack // loaded on first use
	ready bool
	limit int64 // largest object read
	// cache holds objects read from packs, by pack and offset, so that
	// the blobs of a command that changed many files do not each unpack
	// the same delta bases again; cached bounds it.
	cache  map[packAt]packed
	cached int64
}

type packAt struct {
	p   *gitPack
	off int64
}

type packed struct {
	typ  string
	data []byte
}

const maxObjectCache = 32 << 20

type gitPack struct {
	pack   string
	fanout [256]uint32
	ids    []byte // sorted 20-byte ids
	offs   []byte // 4-byte offsets, high bit: index into large
	large  []byte // 8-byte offsets
	f      *os.File
}

var errNoObject = errors.New("no such object")

func (g *gitRepo) openObjects(limit int64) *gitObjects {
	return &gitObjects{dirs: g.objects, limit: limit}
}

func (o *gitObjects) close() {
	for _, p := range o.packs {
		if p.f != nil {
			p.f.Close()
		}
	}
}

func (o *gitObjects) loadPacks() {
	if o.ready {
		return
	}
	o.ready = true
	for _, d := range o.dirs {
		names, _ := filepath.Glob(filepath.Join(d, "pack", "pack-*.idx"))
		for _, n := range names {
			if p, err := readPackIndex(n); err == nil {
				o.packs = append(o.packs, p)
			}
		}
	}
}

func readPackIndex(name string) (*gitPack, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if len(data) < 8+256*4 || !bytes.Equal(data[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(data[4:]) != 2 {
		return nil, errGitUnsupported
	}
	p := &gitPack{pack: strings.TrimSuffix(name, ".idx") + ".pack"}
	for i := range 256 {
		p.fanout[i] = binary.BigEndian.Uint32(data[8+4*i:])
	}
	n := int(p.fanout[255])
	off := 8 + 256*4
	if len(data) < off+n*(20+4+4) {
		return nil, errGitUnsupported
	}
	p.ids = data[off : off+20*n]
	off += 20*n + 4*n // ids, then CRCs
	p.offs = data[off : off+4*n]
	p.large = data[off+4*n:]
	return p, nil
}

// find returns the offset of id in the pack.
func (p *gitPack) find(id [20]byte) (int64, bool) {
	lo := 0
	if id[0] > 0 {
		lo = int(p.fanout[id[0]-1])
	}
	hi := int(p.fanout[id[0]])
	for lo < hi {
		m := (lo + hi) / 2
		switch c := bytes.Compare(p.ids[20*m:20*m+20], id[:]); {
		case c == 0:
			v := binary.BigEndian.Uint32(p.offs[4*m:])
			if v&0x80000000 == 0 {
				return int64(v), true
			}
			i := int(v &^ 0x80000000)
			if 8*i+8 > len(p.large) {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(p.large[8*i:])), true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// blob returns the content of blob id, checked against its id.
func (o *gitObjects) blob(id [20]byte) ([]byte, error) {
	typ, data, err := o.object(id, 0)
	if err != nil {
		return nil, err
	}
	if typ != "blob" {
		return nil, fmt.Errorf("object %x is a %s, not a blob", id[:6], typ)
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	if !bytes.Equal(h.Sum(nil), id[:]) {
		return nil, fmt.Errorf("object %x is damaged", id[:6])
	}
	return bytes.Clone(data), nil // the cache keeps data
}

func (o *gitObjects) object(id [20]byte, depth int) (string, []byte, error) {
	if depth > 64 {
		return "", nil, errGitUnsupported
	}
	hexID := hex.EncodeToString(id[:])
	for _, d := range o.dirs {
		f, err := os.Open(filepath.Join(d, hexID[:2], hexID[2:]))
		if err != nil {
			continue
		}
		typ, data, err := o.loose(f)
		f.Close()
		if err == nil {
			return typ, data, nil
		}
	}
	o.loadPacks()
	for _, p := range o.packs {
		if off, ok := p.find(id); ok {
			return o.packed(p, off, depth)
		}
	}
	return "", nil, errNoObject
}

func (o *gitObjects) loose(f io.Reader) (string, []byte, error) {
	zr, err := zlib.NewReader(f)
	if err != nil {
		return "", nil, err
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	hdr, err := br.ReadString(0)
	if err != nil {
		return "", nil, err
	}
	typ, size, ok := strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || n < 0 || n > o.limit {
		return "", nil, errGitUnsupported
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		return "", nil, err
	}
	return typ, data, nil
}

var packTypes = map[byte]string{1: "commit", 2: "tree", 3: "blob", 4: "tag"}

// packed reads the object at off in pack p, resolving deltas.
func (o *gitObjects) packed(p *gitPack, off int64, depth int) (string, []byte, error) {
	if depth > 64 {
		return "", nil, errGitUnsupported
	}
	if c, ok := o.cache[packAt{p, off}]; ok {
		return c.typ, c.data, nil
	}
	typ, data, err := o.unpack(p, off, depth)
	if err == nil && o.cached+int64(len(data)) <= maxObjectCache {
		if o.cache == nil {
			o.cache = map[packAt]packed{}
		}
		o.cache[packAt{p, off}] = packed{typ, data}
		o.cached += int64(len(data))
	}
	return typ, data, err
}

// unpack reads the object at off in pack p.
func (o *gitObjects) unpack(p *gitPack, off int64, depth int) (string, []byte, error) {
	if p.f == nil {
		f, err := os.Open(p.pack)
		if err != nil {
			return "", nil, err
		}
		p.f = f
	}
	br := bufio.NewReader(io.NewSectionReader(p.f, off, 1<<62))
	c, err := br.ReadByte()
	if err != nil {
		return "", nil, err
	}
	typ := c >> 4 & 7
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = br.ReadByte(); err != nil || shift > 60 {
			return "", nil, errGitUnsupported
		}
		size |= int64(c&0x7f) << shift
	}
	var baseType string
	var base []byte
	switch typ {
	case 6: // delta against the object at a smaller offset
		var hdr [10]byte
		n := 0
		for n < len(hdr) {
			if hdr[n], err = br.ReadByte(); err != nil {
				return "", nil, err
			}
			n++
			if hdr[n-1]&0x80 == 0 {
				break
			}
		}
		rel, k := gitVarint(hdr[:n])
		if k <= 0 || int64(rel) > off {
			return "", nil, errGitUnsupported
		}
		if baseType, base, err = o.packed(p, off-int64(rel), depth+1); err != nil {
			return "", nil, err
		}
	case 7: // delta against an object named by id
		var id [20]byte
		if _, err := io.ReadFull(br, id[:]); err != nil {
			return "", nil, err
		}
		if baseType, base, err = o.object(id, depth+1); err != nil {
			return "", nil, err
		}
	}
	if size > o.limit+1<<20 {
		return "", nil, errGitUnsupported
	}
	zr, err := zlib.NewReader(br)
	if err != nil {
		return "", nil, err
	}
	defer zr.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return "", nil, err
	}
	if typ == 6 || typ == 7 {
		out, err := applyDelta(base, data, o.limit)
		return baseType, out, err
	}
	name, ok := packTypes[typ]
	if !ok {
		return "", nil, errGitUnsupported
	}
	return name, data, nil
}

// applyDelta applies a git delta to base.
func applyDelta(base, delta []byte, limit int64) ([]byte, error) {
	size := func() (int64, bool) {
		var v int64
		for shift := 0; len(delta) > 0 && shift < 63; shift += 7 {
			c := delta[0]
			delta = delta[1:]
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	srcSize, ok1 := size()
	dstSize, ok2 := size()
	if !ok1 || !ok2 || srcSize != int64(len(base)) || dstSize > limit {
		return nil, errGitUnsupported
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n int64
			for i := range 4 {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errGitUnsupported
					}
					off |= int64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := range 3 {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errGitUnsupported
					}
					n |= int64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > int64(len(base)) {
				return nil, errGitUnsupported
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) {
				return nil, errGitUnsupported
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errGitUnsupported
		}
	}
	if int64(len(out)) != dstSize {
		return nil, errGitUnsupported
	}
	return out, nil
}
