package mcp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
)

// Bounds of what trusting a workspace's MCP file may cover: a server whose
// command or arguments name workspace folders holding more than this is
// refused trust.
const (
	MaxTrustFiles = 2000
	MaxTrustBytes = 64 << 20
)

// ErrTrustTooLarge is matched (errors.Is) by the error of [TrustHash] when
// the workspace files a server runs exceed [MaxTrustFiles] or
// [MaxTrustBytes].
var ErrTrustTooLarge = errors.New("too many workspace files to trust")

// TrustHash returns the fingerprint the user trusts for the MCP file of
// workspace ws, whose content is data and parsed form cfg: the hex SHA-256
// of the file and of every workspace file its servers' commands and
// arguments name. A relative name is taken from the workspace (an
// argument "--opt=value" also by its value, "-m pkg.mod" also by its top
// package: "pkg" or "pkg.py"); a file counts by its content, a folder by
// every regular file under it (.git excepted), a symlink by its target as
// well. Names outside the workspace are left out: they are not the
// repository's to change. So a change to a script the agent may edit
// changes the hash, and trust is asked again. Past [MaxTrustFiles] files or
// [MaxTrustBytes] bytes the file cannot be trusted: the error says which
// server and folder.
func TrustHash(ws string, data []byte, cfg Config) (string, error) {
	h := sha256.New()
	writeField(h, "mcp.json")
	writeField(h, string(data))
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		real = ws
	}
	b := &trustBudget{files: MaxTrustFiles, bytes: MaxTrustBytes}
	for _, name := range cfg.Names() {
		sc := cfg.Servers[name]
		if sc.Kind() != TypeStdio {
			continue
		}
		seen := map[string]bool{}
		for _, p := range trustCandidates(sc) {
			rel, ok := workspaceRel(real, p)
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			if err := hashWorkspacePath(h, real, rel, b); err != nil {
				if errors.Is(err, ErrTrustTooLarge) {
					return "", fmt.Errorf("the MCP server %q runs %s, which holds more than %d files or %d MB, so %s cannot be trusted; point the server at its script file instead: %w",
						name, filepath.Join(ws, rel), MaxTrustFiles, MaxTrustBytes>>20, WorkspacePath(ws), err)
				}
				return "", fmt.Errorf("the MCP server %q runs %s, which cannot be read (%w), so %s cannot be trusted; fix the file or the configuration", name, filepath.Join(ws, rel), err, WorkspacePath(ws))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// trustCandidates are the strings of a server's command line that may
// name a workspace file.
func trustCandidates(sc ServerConfig) []string {
	out := []string{sc.Command}
	for i, a := range sc.Args {
		out = append(out, a)
		if _, v, ok := strings.Cut(a, "="); ok && v != "" {
			out = append(out, v)
		}
		if (a == "-m" || a == "--module") && i+1 < len(sc.Args) {
			top, _, _ := strings.Cut(sc.Args[i+1], ".")
			out = append(out, top, top+".py")
		} else if mod, ok := strings.CutPrefix(a, "-m"); ok && mod != "" && !strings.HasPrefix(mod, "-") {
			top, _, _ := strings.Cut(mod, ".")
			out = append(out, top, top+".py")
		}
	}
	return out
}

// workspaceRel returns p, taken relative to the workspace real, as a clean
// relative path when it names something inside it that exists.
func workspaceRel(real, p string) (string, bool) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(real, p)
	}
	rel, err := filepath.Rel(real, filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(real, rel)); err != nil {
		return "", false
	}
	return rel, true
}

type trustBudget struct{ files, bytes int64 }

func (b *trustBudget) take(n int64) error {
	b.files--
	b.bytes -= n
	if b.files < 0 || b.bytes < 0 {
		return ErrTrustTooLarge
	}
	return nil
}

// hashWorkspacePath adds rel (inside the workspace real) to h: a symlink
// by its target and what it leads to inside the workspace, a regular file
// by its content, a folder by its files, anything else by its kind.
func hashWorkspacePath(h hash.Hash, real, rel string, b *trustBudget) error {
	full := filepath.Join(real, rel)
	fi, err := os.Lstat(full)
	if err != nil {
		return err
	}
	writeField(h, "path")
	writeField(h, filepath.ToSlash(rel))
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(full)
		if err != nil {
			return err
		}
		writeField(h, "symlink")
		writeField(h, target)
		dest, err := filepath.EvalSymlinks(full)
		if err != nil {
			return nil // a dangling link counts by its target
		}
		destRel, ok := workspaceRel(real, dest)
		if !ok {
			return nil // outside the workspace
		}
		if fi, err = os.Stat(dest); err != nil {
			return nil
		}
		full, rel = dest, destRel
	}
	switch {
	case fi.Mode().IsRegular():
		return hashFile(h, full, b)
	case fi.IsDir():
		return hashDir(h, real, rel, b)
	}
	writeField(h, "special "+fi.Mode().Type().String())
	return nil
}

// hashFile adds the content of the regular file full to h.
func hashFile(h hash.Hash, full string, b *trustBudget) error {
	data, cut, err := safefile.Read(full, b.bytes)
	if err != nil {
		return err
	}
	if err := b.take(int64(len(data))); err != nil || cut {
		return ErrTrustTooLarge
	}
	writeField(h, "file")
	writeField(h, string(data))
	return nil
}

// hashDir adds every entry under the folder rel to h, in order: regular
// files by content, symlinks by target, .git folders skipped.
func hashDir(h hash.Hash, real, rel string, b *trustBudget) error {
	root := filepath.Join(real, rel)
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			if len(paths) >= int(b.files) {
				return ErrTrustTooLarge
			}
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(paths)
	for _, p := range paths {
		r, _ := filepath.Rel(real, p)
		writeField(h, "entry")
		writeField(h, filepath.ToSlash(r))
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			// By its target and, inside the workspace, what it leads to;
			// the budget ends a loop of links.
			if err := b.take(0); err != nil {
				return err
			}
			if err := hashWorkspacePath(h, real, r, b); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := hashFile(h, p, b); err != nil {
				return err
			}
		default:
			writeField(h, "special "+fi.Mode().Type().String())
		}
	}
	return nil
}

// writeField adds s to h with its length, so fields cannot run together.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
