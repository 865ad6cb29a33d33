// Package safefile reads the files the engine opens on its own (AGENTS.md,
// its includes, .git/HEAD, the memory file) without trusting the workspace:
// a read never blocks on a FIFO or a device, never follows a symlink it was
// told not to, never grows past a caller's cap, and, through an [os.Root],
// never leaves the directory it was confined to, whatever a concurrent
// process swaps in.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotRegular is matched (errors.Is) by the error returned for a FIFO, a
// device, a socket, a directory or a symlink where a regular file was
// required.
var ErrNotRegular = errors.New("not a regular file")

// Read opens path (read-only and non-blocking, so a FIFO cannot hang the
// caller), refuses anything but a regular file, and returns at most limit
// bytes; truncated reports that the file held more.
func Read(path string, limit int64) (data []byte, truncated bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readOpen(f, path, limit)
}

// ReadIn is [Read] confined to root: name is relative to it, resolution
// never leaves it, and a name that is itself a symlink is refused even when
// the link points inside root.
func ReadIn(root *os.Root, name string, limit int64) (data []byte, truncated bool, err error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, notRegular(name, fi.Mode())
	}
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readOpen(f, name, limit)
}

// ReadWithin is [Read] of path kept inside the folder dir ("" for no
// folder): links are followed only as far as they stay inside dir, so a
// workspace's file linked to one elsewhere (~/.ssh/id_rsa) is refused.
func ReadWithin(dir, path string, limit int64) (data []byte, truncated bool, err error) {
	if dir == "" {
		return Read(path, limit)
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, false, fmt.Errorf("%s is outside %s", path, dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false, err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readOpen(f, path, limit)
}

func readOpen(f *os.File, name string, limit int64) ([]byte, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, notRegular(name, fi.Mode())
	}
	if limit < 0 {
		limit = 0
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

func notRegular(name string, mode fs.FileMode) error {
	kind := "special file"
	switch {
	case mode&fs.ModeSymlink != 0:
		kind = "symlink"
	case mode.IsDir():
		kind = "directory"
	case mode&fs.ModeNamedPipe != 0:
		kind = "FIFO"
	case mode&fs.ModeDevice != 0:
		kind = "device"
	case mode&fs.ModeSocket != 0:
		kind = "socket"
	}
	return fmt.Errorf("%s is a %s, %w; only regular files are read", name, kind, ErrNotRegular)
}

// Config turns the outcome of reading a configuration file at path (Read
// or ReadIn with limit) into its data, or into a one-sentence error that
// names path and says what to do. A missing file gives nil data and no
// error; an empty one gives empty data.
func Config(path string, data []byte, cut bool, err error, limit int64) ([]byte, error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, ErrNotRegular):
		return nil, fmt.Errorf("%s is not a regular file (%w); replace it with a JSON file or remove it", path, err)
	case err != nil:
		return nil, fmt.Errorf("%s cannot be read (%w); check its permissions", path, err)
	case cut:
		return nil, fmt.Errorf("%s is larger than %d bytes; shorten it", path, limit)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
