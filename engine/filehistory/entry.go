package filehistory

import (
	"encoding/hex"
	"io/fs"
)

// Kinds of manifest entries.
const (
	kAbsent uint8 = iota // no such path (only in a command's earlier states)
	kFile                // a regular file whose content was read, or is in git
	kLink                // a symbolic link; extra holds its image
	kNone                // not restorable; extra says why
)

// entry is one path of a workspace manifest: its stat and a compact form of
// its image, small enough that 100,000 of them stay within a few MB.
type entry struct {
	Size  int64 // stat size
	Mtime int64
	Ctime int64
	Ino   uint64
	Mode  fs.FileMode
	kind  uint8
	// git means the content was not read: it is the blob sum[:20] of the
	// repository's object store, which git's index vouched for when the
	// file's stat matched its entry there.
	git   bool
	isize int64    // size of the content read (or of the git blob)
	sum   [32]byte // SHA-256 of the content, or the git blob id
	extra *Image   // the image of a link or of something not restorable
}

func statOf(fi fs.FileInfo) entry {
	ino, ctime, _ := statExtra(fi)
	return entry{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: fi.Mode(), Ino: ino, Ctime: ctime}
}

// sameStat reports whether e and o have the same stat, so that the content
// read for one can be reused for the other.
func (e entry) sameStat(o entry) bool {
	return e.kind != kAbsent && o.kind != kAbsent && e.Size == o.Size && e.Mtime == o.Mtime && e.Mode == o.Mode && e.Ino == o.Ino && e.Ctime == o.Ctime
}

// withImage returns e holding img, whose content has SHA-256 img.SHA.
func (e entry) withImage(img Image) entry {
	e.git, e.extra, e.sum, e.isize = false, nil, [32]byte{}, 0
	switch img.Kind {
	case File:
		e.kind = kFile
		e.isize = img.Size
		if b, err := hex.DecodeString(img.SHA); err == nil && len(b) == 32 {
			copy(e.sum[:], b)
		}
	case Link:
		e.kind, e.extra = kLink, &img
	case Absent:
		e.kind = kAbsent
	default:
		e.kind, e.extra = kNone, &img
	}
	return e
}

// image returns the Image e stands for; a git entry must be resolved first
// (see Workspace.resolve).
func (e entry) image() Image {
	switch e.kind {
	case kAbsent:
		return Image{Kind: Absent}
	case kFile:
		if e.git {
			return Image{Kind: Unrestorable, Size: e.Size, Why: "its content was never read"}
		}
		return Image{Kind: File, SHA: hex.EncodeToString(e.sum[:]), Mode: e.Mode.Perm(), Size: e.isize}
	}
	if e.extra != nil {
		return *e.extra
	}
	return Image{Kind: Unrestorable, Why: "its state is unknown"}
}

// sameImage reports whether e and o hold the same state, when neither is a
// git entry or both are.
func (e entry) sameImage(o entry) bool {
	if e.kind != o.kind {
		return false
	}
	switch e.kind {
	case kAbsent:
		return true
	case kFile:
		return e.git == o.git && e.sum == o.sum && e.Mode.Perm() == o.Mode.Perm()
	case kLink:
		return e.image().Same(o.image())
	}
	return false
}

func sumOf(sha string) ([32]byte, bool) {
	var s [32]byte
	b, err := hex.DecodeString(sha)
	if err != nil || len(b) != 32 {
		return s, false
	}
	copy(s[:], b)
	return s, true
}
