package tool

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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
	case errors.Is(err, ErrOutsideWorkspace):
		return fmt.Sprintf("%q leads outside the workspace; use a path inside the workspace, relative to its root", rel)
	case errors.Is(err, errNotRegular):
		return fmt.Sprintf("%q is not a regular file; use a regular file instead", rel)
	case errors.Is(err, errChanged):
		return fmt.Sprintf("%q was replaced while it was being opened; call again once it is stable", rel)
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

// joinRel joins a workspace-relative directory and a slash path below it.
func joinRel(dir, below string) string {
	if dir == "." || dir == "" {
		return below
	}
	return dir + "/" + below
}
