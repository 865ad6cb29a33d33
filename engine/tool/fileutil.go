package tool

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// sniffLen is how much of a file is inspected to decide whether it is binary.
const sniffLen = 8 << 10

// looksBinary reports whether head, the first bytes of a file, contains a NUL
// byte or invalid UTF-8. complete says whether head is the whole file; when
// it is not, a rune cut off at the end of head is not held against it.
func looksBinary(head []byte, complete bool) bool {
	if len(head) > sniffLen {
		head = head[:sniffLen]
		complete = false
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 {
			if !complete && !utf8.FullRune(head[i:]) {
				return false
			}
			return true
		}
		i += size
	}
	return false
}

// describeStatError turns an error from stat or open into the tail of a
// one-sentence message about rel.
func describeStatError(rel string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%q does not exist; use list_dir or grep to find the right path", rel)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%q cannot be accessed (permission denied); choose a file you can read", rel)
	default:
		return fmt.Sprintf("%q cannot be accessed (%v); check the path with list_dir", rel, unwrapPathError(err))
	}
}

// unwrapPathError drops the absolute path from an *fs.PathError so messages
// only show workspace-relative paths.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeAtomic replaces the file at abs with data by writing a temporary file
// in the same directory and renaming it over the target, so readers see
// either the old or the new content. The parent directories are created as
// needed. An existing file keeps its permission bits; a new one gets 0644.
// If abs is a symlink, even a dangling one, the file it points to is written
// and the link kept.
func writeAtomic(abs string, data []byte) (created bool, err error) {
	target := abs
	if real, err := resolveExisting(abs, 0); err == nil {
		target = real
	}
	mode := fs.FileMode(0o644)
	fi, statErr := os.Stat(target)
	switch {
	case statErr == nil:
		if fi.IsDir() {
			return false, errIsDir
		}
		mode = fi.Mode().Perm()
	case errors.Is(statErr, fs.ErrNotExist):
		created = true
	default:
		return false, statErr
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return false, err
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			os.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err = tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err = tmp.Close(); err != nil {
		return false, err
	}
	if err = os.Chmod(tmpName, mode); err != nil {
		return false, err
	}
	if err = os.Rename(tmpName, target); err != nil {
		return false, err
	}
	return created, nil
}

var errIsDir = errors.New("is a directory")

// walkRoot returns the directory to walk for abs: abs itself, or its target
// when abs is a symlink (which Confine has already checked), because
// filepath.WalkDir does not descend into a symlinked root.
func walkRoot(abs string) string {
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// joinRel joins a workspace-relative directory and a slash path below it.
func joinRel(dir, below string) string {
	if dir == "." || dir == "" {
		return below
	}
	return dir + "/" + below
}
