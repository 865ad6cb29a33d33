package tool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"syscall"
)

// wsRoot is the workspace opened as an [os.Root] for one tool call. Every
// file the tools read, write, stat or walk is reached through it, so path
// resolution never leaves the workspace, whatever a concurrent process does
// to the files meanwhile: [Confine] only gives the friendly errors.
//
// Names passed to its methods are workspace-relative in the OS's separator
// form ("." for the root); rel values are the slash form shown to the model.
type wsRoot struct {
	root *os.Root
	ws   string // the workspace (or additional root) as configured, absolute and clean
	real string // ws with its symlinks resolved
	// shown is "" for the workspace, whose files are shown relative to
	// it, and the slash form of an additional root, whose files are
	// shown by their absolute paths.
	shown string
	roots []string // the additional roots, named when a path is outside
}

// openWorkspace opens the folder env confines path p to: the additional
// root an absolute p lies in, else the workspace. The caller must Close
// it.
func openWorkspace(env *Env, p string) (*wsRoot, error) {
	ws, shown, err := env.rootOf(p)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return nil, fmt.Errorf("workspace %q is not accessible (%w); open an existing workspace folder", ws, unwrapPathError(err))
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("workspace %q cannot be opened (%w); open an existing workspace folder", ws, unwrapPathError(err))
	}
	return &wsRoot{root: root, ws: ws, real: real, shown: shown, roots: env.Roots}, nil
}

// show returns the form the model sees of name, a slash-separated path
// relative to w: itself in the workspace, absolute in an additional root.
func (w *wsRoot) show(name string) string {
	if w.shown == "" {
		return name
	}
	return path.Join(w.shown, name)
}

// Close releases the workspace handle.
func (w *wsRoot) Close() { w.root.Close() }

// confine checks the path argument p with [Confine] and returns its
// workspace-relative slash form and the name to use with w.
func (w *wsRoot) confine(p string) (rel, name string, err error) {
	abs, err := Confine(w.ws, p)
	if err != nil {
		var out *outsideError
		if errors.As(err, &out) {
			out.roots = w.roots
		}
		return "", "", err
	}
	rel = relPath(w.ws, abs)
	return w.show(rel), filepath.FromSlash(rel), nil
}

// resolve follows the symlinks in name as far as it exists, dangling ones
// included, and returns the workspace-relative name of what it points to.
// It refuses, with an error matching [ErrOutsideWorkspace], a name that
// resolves outside. It reads the file system without the root's guarantee,
// so its answer is only a hint: whatever is then opened goes through the
// root.
func (w *wsRoot) resolve(name string) (string, error) {
	real, err := resolveExisting(filepath.Join(w.real, name), 0)
	if err != nil {
		return "", err
	}
	if !within(w.real, real) {
		return "", &outsideError{path: w.show(filepath.ToSlash(name)), roots: w.roots}
	}
	rel, err := filepath.Rel(w.real, real)
	if err != nil {
		return "", &outsideError{path: w.show(filepath.ToSlash(name)), roots: w.roots}
	}
	return rel, nil
}

// do runs op on name through the root. The root refuses absolute symlinks,
// even ones pointing inside the workspace, so when op fails other than with
// "does not exist", do retries it once on the name the symlinks resolve to
// (still through the root). It returns the name op last ran on.
func (w *wsRoot) do(name string, op func(name string) error) (string, error) {
	err := op(name)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return name, err
	}
	real, rerr := w.resolve(name)
	switch {
	case errors.Is(rerr, ErrOutsideWorkspace):
		return name, rerr
	case rerr != nil || real == name:
		return name, err
	}
	return real, op(real)
}

// stat stats name through the root, following symlinks inside the
// workspace, and returns the name that worked (see do).
func (w *wsRoot) stat(name string) (fs.FileInfo, string, error) {
	var fi fs.FileInfo
	used, err := w.do(name, func(n string) (err error) {
		fi, err = w.root.Stat(n)
		return err
	})
	return fi, used, err
}

// openRegular opens name for reading through the root and checks that it
// is the regular file want (from an earlier stat), so a file swapped in
// between is refused. It does not block on named pipes.
func (w *wsRoot) openRegular(name string, want fs.FileInfo) (*os.File, fs.FileInfo, error) {
	var f *os.File
	_, err := w.do(name, func(n string) (err error) {
		f, err = w.root.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, nil, err
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, errNotRegular
	case want != nil && !os.SameFile(fi, want):
		f.Close()
		return nil, nil, errChanged
	}
	return f, fi, nil
}

// readRegular reads the regular file name through the root, refusing files
// over limit bytes with errTooBig.
func (w *wsRoot) readRegular(name string, want fs.FileInfo, limit int64) ([]byte, error) {
	f, fi, err := w.openRegular(name, want)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, errTooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooBig
	}
	return data, nil
}

var (
	errIsDir      = errors.New("is a directory")
	errNotRegular = errors.New("not a regular file")
	errChanged    = errors.New("the file changed while it was being opened")
	errTooBig     = errors.New("file too large")
)

// writeAtomic replaces the file name with data by writing a temporary file
// in the same directory and renaming it over the target, all through the
// root, so readers see either the old or the new content and nothing is
// ever written outside the workspace. The parent directories are created as
// needed. An existing file keeps its permission bits; a new one gets 0644.
// If name is a symlink, even a dangling one, the file it points to is
// written and the link kept.
func (w *wsRoot) writeAtomic(name string, data []byte) (created bool, err error) {
	target, err := w.resolve(name)
	if err != nil {
		return false, err
	}
	mode := fs.FileMode(0o644)
	fi, statErr := w.root.Stat(target)
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
	if dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
	}
	tmp, tmpName, err := w.createTemp(dir, filepath.Base(target))
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			w.root.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err = tmp.Chmod(mode); err != nil {
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
	if err = w.root.Rename(tmpName, target); err != nil {
		return false, err
	}
	return created, nil
}

// createTemp creates a new file named like ".base.tmp-123" in dir through
// the root.
func (w *wsRoot) createTemp(dir, base string) (*os.File, string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) || try == 9 {
			return nil, "", err
		}
	}
}
