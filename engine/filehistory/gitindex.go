package filehistory

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// gitRepo is the git repository a workspace is in, read directly from its
// files: no git command is ever run and nothing under .git is written.
type gitRepo struct {
	gitDir  string   // the repository's git directory
	objects []string // object directories: its own, then alternates
	prefix  string   // the workspace's path inside the work tree, "" or "dir/"
}

// findRepo returns the repository whose work tree holds dir, or nil.
func findRepo(dir string) *gitRepo {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil
	}
	for top := real; ; {
		dotgit := filepath.Join(top, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			gitDir := ""
			switch {
			case fi.IsDir():
				gitDir = dotgit
			case fi.Mode().IsRegular():
				data, err := os.ReadFile(dotgit)
				if err != nil {
					return nil
				}
				s, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
				if !ok {
					return nil
				}
				gitDir = strings.TrimSpace(s)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(top, gitDir)
				}
			default:
				return nil
			}
			rel, err := filepath.Rel(top, real)
			if err != nil {
				return nil
			}
			g := &gitRepo{gitDir: gitDir}
			if rel != "." {
				g.prefix = filepath.ToSlash(rel) + "/"
			}
			common := gitDir
			if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				common = strings.TrimSpace(string(data))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gitDir, common)
				}
			}
			g.objects = []string{filepath.Join(common, "objects")}
			if data, err := os.ReadFile(filepath.Join(common, "objects", "info", "alternates")); err == nil {
				for _, l := range strings.Split(string(data), "\n") {
					if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
						if !filepath.IsAbs(l) {
							l = filepath.Join(common, "objects", l)
						}
						g.objects = append(g.objects, l)
					}
				}
			}
			return g
		}
		up := filepath.Dir(top)
		if up == top {
			return nil
		}
		top = up
	}
}

// gitEntry is what git's index says of one clean, stage-0 regular file.
type gitEntry struct {
	ctime, mtime int64
	ino, size    uint32
	exec         bool
	id           [20]byte
}

// gitIndex is the part of a repository's index that a snapshot may trust.
type gitIndex struct {
	entries map[string]gitEntry // by workspace path
	mtime   int64               // the index file's modification time
	attrs   bool                // a .gitattributes file is tracked
}

// errGitUnsupported means the repository uses something this reader does
// not handle (a split or sparse index, SHA-256 objects, content filters or
// line-ending conversion): files are then read instead.
var errGitUnsupported = errors.New("the git index uses features this reader does not handle")

// trustable reports whether what git stores can stand for the files of the
// work tree: no content filter, line-ending or encoding conversion may be
// configured, since the blob would then differ from the file. It errs on
// the side of reading files: any mention of such a setting, anywhere,
// disables trusting the index.
func (g *gitRepo) trustable(x *gitIndex) bool {
	// A filter or conversion only applies to paths an attributes file
	// names, so a configured filter driver alone (git-lfs installed for
	// the user) does not matter, but any attributes file does.
	// "include" covers include.path and includeIf, whose files are not
	// followed: one could set any of the others.
	words := []string{"autocrlf", "attributesfile", "eol", "objectformat", "partialclone", "worktreeconfig", "include"}
	mentions := func(data []byte, ws []string) bool {
		low := strings.ToLower(string(data))
		for _, l := range strings.Split(low, "\n") {
			l = strings.TrimSpace(l)
			if l == "" || l[0] == '#' || l[0] == ';' {
				continue
			}
			for _, w := range ws {
				if strings.Contains(l, w) {
					return true
				}
			}
		}
		return false
	}
	configs := []string{filepath.Join(g.gitDir, "config"), "/etc/gitconfig"}
	if data, err := os.ReadFile(filepath.Join(g.gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(g.gitDir, c)
		}
		configs = append(configs, filepath.Join(c, "config"), filepath.Join(c, "info", "attributes"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"), filepath.Join(home, ".config", "git", "attributes"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		configs = append(configs, filepath.Join(x, "git", "config"), filepath.Join(x, "git", "attributes"))
	}
	for _, v := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if p := os.Getenv(v); p != "" {
			configs = append(configs, p)
		}
	}
	for _, c := range configs {
		if data, err := os.ReadFile(c); err == nil && mentions(data, words) {
			return false
		}
	}
	if os.Getenv("GIT_CONFIG_COUNT") != "" || os.Getenv("GIT_CONFIG_PARAMETERS") != "" {
		return false
	}
	if data, err := os.ReadFile(filepath.Join(g.gitDir, "info", "attributes")); err == nil && len(bytes.TrimSpace(data)) > 0 {
		return false
	}
	for _, o := range g.objects {
		if ents, err := os.ReadDir(filepath.Join(o, "pack")); err == nil {
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".promisor") {
					return false // a partial clone: blobs may be missing
				}
			}
		}
	}
	// A tracked .gitattributes anywhere may convert content (an
	// untracked one is caught by the walk).
	return !x.attrs
}

// readIndex reads the repository's index with go-git's decoder (versions
// 2 to 4; a required extension it does not know, such as a split index
// "link" or a sparse index "sdir", is an error): the stage-0 regular files
// under the workspace that have no flag making their stat meaningless
// (assume-unchanged, skip-worktree, intent-to-add).
func (g *gitRepo) readIndex() (x *gitIndex, err error) {
	f, err := os.Open(filepath.Join(g.gitDir, "index"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	defer func() {
		// The decoder parses a file anyone may have written; whatever
		// it does with a damaged one, the files are read instead.
		if recover() != nil {
			x, err = nil, errGitUnsupported
		}
	}()
	if n := len(data) - sha1.Size; n >= 12 && bytes.Equal(data[n:], make([]byte, sha1.Size)) {
		// git leaves the checksum zero when index.skipHash is set (as
		// feature.manyFiles does); go-git's decoder wants it, so it is
		// filled in.
		sum := sha1.Sum(data[:n])
		copy(data[n:], sum[:])
	}
	var idx index.Index
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil {
		return nil, errGitUnsupported
	}
	assumed, err := assumeValid(data, &idx)
	if err != nil {
		return nil, err
	}
	out := &gitIndex{entries: make(map[string]gitEntry, len(idx.Entries)), mtime: fi.ModTime().UnixNano()}
	for i, e := range idx.Entries {
		if e.Name == ".gitattributes" || strings.HasSuffix(e.Name, "/.gitattributes") {
			out.attrs = true
		}
		// Stage 0 is a merged entry (go-git's index.Merged is 1, the
		// value of index.AncestorMode, so it is not used here).
		rel, ok := strings.CutPrefix(e.Name, g.prefix)
		if !ok || e.Stage != 0 || assumed[i] || e.SkipWorktree || e.IntentToAdd ||
			(e.Mode != filemode.Regular && e.Mode != filemode.Executable) {
			continue
		}
		out.entries[rel] = gitEntry{
			ctime: unixNano(e.CreatedAt),
			mtime: unixNano(e.ModifiedAt),
			ino:   e.Inode,
			size:  e.Size,
			exec:  e.Mode == filemode.Executable,
			id:    e.Hash,
		}
	}
	return out, nil
}

// unixNano returns t in nanoseconds since 1970, where the decoder leaves a
// zero time for zero seconds and nanoseconds.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// assumeValid reports which entries of idx, decoded from data, have git's
// assume-valid ("assume unchanged") flag, which go-git's decoder does not
// keep: their stat says nothing of the file. Each entry is found from the
// one before, by the layout of its version, and must hold the object id
// the decoder read there; otherwise the index is not used.
func assumeValid(data []byte, idx *index.Index) ([]bool, error) {
	out := make([]bool, len(idx.Entries))
	off := 12 // signature, version, entry count
	for i, e := range idx.Entries {
		if off < 0 || off+62 > len(data) || !bytes.Equal(data[off+40:off+60], e.Hash[:]) {
			return nil, errGitUnsupported
		}
		flags := binary.BigEndian.Uint16(data[off+60:])
		out[i] = flags&0x8000 != 0
		n := 62 // the fixed part
		if flags&0x4000 != 0 {
			n += 2 // extended flags
		}
		if idx.Version < 4 {
			// The full path, then one to eight NULs to a multiple of eight.
			off += (n + len(e.Name) + 8) &^ 7
			continue
		}
		// The length of the previous path to drop (a varint), then the
		// rest of the path, NUL terminated.
		p := off + n
		for p < len(data) && data[p]&0x80 != 0 {
			p++
		}
		end := bytes.IndexByte(data[min(p+1, len(data)):], 0)
		if end < 0 {
			return nil, errGitUnsupported
		}
		off = p + 1 + end + 1
	}
	return out, nil
}

// vouches reports whether the index says the file with stat en has blob
// ge.id as its content: every stat field git records matches, and the file
// is not "racily clean" (modified no earlier than the index was written,
// when the same stat may hide a change git has not seen).
func (x *gitIndex) vouches(ge gitEntry, en entry) bool {
	return en.Mode.IsRegular() && en.Mtime == ge.mtime && en.Ctime == ge.ctime &&
		uint32(en.Ino) == ge.ino && uint32(en.Size) == ge.size && en.Size >= 0 &&
		(en.Mode.Perm()&0o100 != 0) == ge.exec && en.Mtime < x.mtime
}
