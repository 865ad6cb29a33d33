package filehistory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ImageKind says what an Image holds.
type ImageKind string

// The kinds of images.
const (
	Absent       ImageKind = "absent" // the file did not exist
	File         ImageKind = "file"   // a regular file whose content is stored
	Link         ImageKind = "link"   // a symbolic link, recorded as its target, never followed
	Unrestorable ImageKind = "none"   // something that cannot be put back; Why says why
)

// Image is the recorded state of one workspace path: its kind, and for a
// regular file the SHA-256 of its content (kept in the content store), its
// permission bits and size; for a link its target. Dropped marks an image
// whose content was dropped to respect the store's size limit.
type Image struct {
	Kind    ImageKind   `json:"k"`
	SHA     string      `json:"h,omitempty"`
	Mode    fs.FileMode `json:"m,omitempty"`
	Size    int64       `json:"s,omitempty"`
	Target  string      `json:"t,omitempty"`
	Why     string      `json:"w,omitempty"`
	Dropped bool        `json:"d,omitempty"`
}

// Same reports whether a and b describe the same state. Two unrestorable
// images are never the same, since their content is unknown.
func (a Image) Same(b Image) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Absent:
		return true
	case File:
		return a.SHA == b.SHA && a.Mode == b.Mode
	case Link:
		return a.Target == b.Target
	}
	return false
}

// String describes the image in a few words for people.
func (a Image) String() string {
	switch a.Kind {
	case Absent:
		return "absent"
	case File:
		return fmt.Sprintf("%d bytes, sha256 %.12s", a.Size, a.SHA)
	case Link:
		return "symlink to " + a.Target
	}
	return "not restorable: " + a.Why
}

// cleanRel turns a workspace-relative path into the slash-separated, clean
// form used as a key, refusing paths that leave the workspace.
func cleanRel(p string) (string, error) {
	s := path.Clean(filepath.ToSlash(p))
	if s == "." || s == "" || !filepath.IsLocal(filepath.FromSlash(s)) || strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("%q is not a path inside the workspace; pass a workspace-relative path", p)
	}
	return s, nil
}

// readImage returns the image of rel in root and, for a regular file no
// larger than maxFile, its content. Conditions of the file itself (missing,
// unreadable, too large, a FIFO) are reported in the image, not as errors;
// symlinks are recorded, never followed.
func readImage(root *os.Root, rel string, lim Limits) (Image, []byte) {
	name := filepath.FromSlash(rel)
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) && isNotDir(root, name) {
		return Image{Kind: Absent}, nil
	}
	if err != nil {
		return Image{Kind: Unrestorable, Why: "it could not be read: " + cause(err).Error()}, nil
	}
	return imageOf(root, name, fi, lim)
}

// isNotDir reports whether a parent of name is not a directory, which makes
// name absent.
func isNotDir(root *os.Root, name string) bool {
	for dir := filepath.Dir(name); dir != "." && dir != string(filepath.Separator); dir = filepath.Dir(dir) {
		if fi, err := root.Lstat(dir); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// imageOf returns the image of name, whose Lstat result is fi.
func imageOf(root *os.Root, name string, fi fs.FileInfo, lim Limits) (Image, []byte) {
	maxFile := lim.FileBytes
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		target, err := root.Readlink(name)
		if err != nil {
			return Image{Kind: Unrestorable, Why: "its link target could not be read: " + cause(err).Error()}, nil
		}
		return Image{Kind: Link, Target: target}, nil
	case m.IsDir():
		return Image{Kind: Unrestorable, Why: "it is a directory"}, nil
	case !m.IsRegular():
		return Image{Kind: Unrestorable, Why: "it is not a regular file (" + m.Type().String() + ")"}, nil
	case fi.Size() > maxFile:
		return Image{Kind: Unrestorable, Size: fi.Size(), Why: fmt.Sprintf("it is larger than the %s limit for checkpoints", byteCount(maxFile))}, nil
	}
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return Image{Kind: Unrestorable, Why: "it could not be read: " + cause(err).Error()}, nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return Image{Kind: Unrestorable, Why: "it changed into something other than a regular file while being read"}, nil
	}
	data, err := readAll(f, fi.Size(), maxFile)
	if err != nil {
		return Image{Kind: Unrestorable, Why: "it could not be read: " + cause(err).Error()}, nil
	}
	if int64(len(data)) > maxFile {
		return Image{Kind: Unrestorable, Size: int64(len(data)), Why: fmt.Sprintf("it is larger than the %s limit for checkpoints", byteCount(maxFile))}, nil
	}
	return Image{Kind: File, SHA: hashOf(data), Mode: fi.Mode().Perm(), Size: int64(len(data))}, data
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// cause returns the part of err worth showing: the cause without the
// operation and path that the message already names. It still matches
// what err matched for errors.Is (fs.ErrNotExist, fs.ErrPermission).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func byteCount(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// readAll reads f, expected to hold size bytes, into a buffer of that size,
// reading at most limit+1 bytes in case the file grew. A read that returns
// fewer bytes than asked for, having brought the total to size, ends it:
// the file holds what its stat said, and asking again only to be told
// about the end would be one more system call per file.
func readAll(f io.Reader, size, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, limit)+1)
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := min(int64(cap(buf)), limit+1) - int64(len(buf))
		n, err := f.Read(buf[len(buf) : int64(len(buf))+want])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == nil && int64(n) < want && int64(len(buf)) == size {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}
