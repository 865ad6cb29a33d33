package tool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is matched (with errors.Is) by every error [Confine]
// returns for a path that would reach outside the workspace.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

type outsideError struct {
	path  string
	roots []string // the session's additional roots, if any
}

func (e *outsideError) Error() string {
	if len(e.roots) > 0 {
		return fmt.Sprintf("path %q is outside the workspace and its additional folders (%s); use a path relative to the workspace root, or an absolute path inside one of those folders", e.path, strings.Join(e.roots, ", "))
	}
	return fmt.Sprintf("path %q is outside the workspace; use a path inside the workspace, relative to its root", e.path)
}

func (e *outsideError) Is(target error) bool { return target == ErrOutsideWorkspace }

// maxSymlinkHops bounds symlink chains followed while resolving a path.
const maxSymlinkHops = 40

// Confine resolves p, which is relative to workspace or absolute, and
// returns the cleaned absolute path it names inside workspace. The returned
// path is lexical: symlinks inside the workspace are kept, not resolved.
//
// Confine refuses, with an error matching [ErrOutsideWorkspace] that tells
// the model to use a path inside the workspace:
//   - relative paths that climb out with "..", such as "../x" or "a/../../x";
//   - absolute paths outside the workspace;
//   - paths where any component, including the final one, is a symlink that
//     resolves outside the workspace; for paths that do not exist yet, the
//     nearest existing ancestor is resolved, and dangling symlinks are
//     followed to where they would create a file.
//
// An empty p is refused. The check is made at call time; it cannot prevent
// a concurrent process from swapping a directory for a symlink afterwards,
// which is why the built-in file tools use Confine only for its messages and
// then reach the file through an [os.Root] on the workspace, whose
// resolution never leaves it.
func Confine(workspace, p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty; give a path relative to the workspace root, such as \".\" or \"src/main.go\"")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte; give a plain file path", p)
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %q cannot be resolved (%w); open a different workspace folder", workspace, err)
	}
	wsReal, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", fmt.Errorf("workspace %q is not accessible (%w); open an existing workspace folder", workspace, err)
	}

	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		switch {
		case within(ws, abs):
		case within(wsReal, abs):
			// Spelled through the workspace's resolved location; rebase it
			// onto the workspace path the caller uses.
			rel, _ := filepath.Rel(wsReal, abs)
			abs = filepath.Join(ws, rel)
		default:
			return "", &outsideError{path: p}
		}
	} else {
		abs = filepath.Join(ws, p)
		if !within(ws, abs) {
			return "", &outsideError{path: p}
		}
	}

	real, err := resolveExisting(abs, 0)
	if err != nil {
		if errors.Is(err, errSymlinkLoop) {
			return "", fmt.Errorf("path %q goes through too many symlinks; use a direct path inside the workspace", p)
		}
		return "", fmt.Errorf("path %q cannot be resolved (%w); use a different path inside the workspace", p, err)
	}
	if !within(wsReal, real) {
		return "", &outsideError{path: p}
	}
	return abs, nil
}

var errSymlinkLoop = errors.New("too many levels of symbolic links")

// resolveExisting resolves every symlink in abs as far as the path exists and
// appends the components that do not exist yet unchanged. A dangling
// symlink is followed to its target, because writing through it would
// create the target.
func resolveExisting(abs string, hops int) (string, error) {
	if hops > maxSymlinkHops {
		return "", errSymlinkLoop
	}
	cur := abs
	var rest []string
	for {
		if _, err := os.Lstat(cur); err == nil {
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			// Nothing exists, not even the root; nothing to resolve.
			return abs, nil
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		// cur exists but cannot be resolved: a dangling symlink or a loop.
		fi, lerr := os.Lstat(cur)
		if lerr != nil || fi.Mode()&os.ModeSymlink == 0 {
			return "", err
		}
		target, rerr := os.Readlink(cur)
		if rerr != nil {
			return "", rerr
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(cur), target)
		}
		real, err = resolveExisting(filepath.Clean(target), hops+1)
		if err != nil {
			return "", err
		}
	}
	for i := len(rest) - 1; i >= 0; i-- {
		real = filepath.Join(real, rest[i])
	}
	return real, nil
}

// within reports whether p is root or lies below it; both must be clean and
// absolute.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// relPath reports abs relative to the workspace root, slash-separated; the
// root itself is ".".
func relPath(ws, abs string) string {
	rel, err := filepath.Rel(ws, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}
