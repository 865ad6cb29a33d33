package filehistory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	words := []string{"autocrlf", "attributesfile", "eol", "objectformat", "partialclone", "worktreeconfig"}
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

// readIndex reads the repository's index: the stage-0 regular files under
// the workspace that have no flag making their stat meaningless
// (assume-unchanged, skip-worktree, intent-to-add).
func (g *gitRepo) readIndex() (*gitIndex, error) {
	name := filepath.Join(g.gitDir, "index")
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, errGitUnsupported
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, errGitUnsupported
	}
	count := int(binary.BigEndian.Uint32(data[8:]))
	body := data[:len(data)-20]
	out := &gitIndex{entries: make(map[string]gitEntry, min(count, len(body)/62)), mtime: fi.ModTime().UnixNano()}
	off := 12
	var prev []byte
	for range count {
		if off+62 > len(body) {
			return nil, errGitUnsupported
		}
		e := body[off:]
		be := binary.BigEndian
		ge := gitEntry{
			ctime: int64(be.Uint32(e[0:]))*1e9 + int64(be.Uint32(e[4:])),
			mtime: int64(be.Uint32(e[8:]))*1e9 + int64(be.Uint32(e[12:])),
			ino:   be.Uint32(e[20:]),
			size:  be.Uint32(e[36:]),
		}
		mode := be.Uint32(e[24:])
		copy(ge.id[:], e[40:60])
		flags := be.Uint16(e[60:])
		p := 62
		var ext uint16
		if flags&0x4000 != 0 {
			if version < 3 || off+64 > len(body) {
				return nil, errGitUnsupported
			}
			ext = be.Uint16(e[62:])
			p = 64
		}
		var path []byte
		if version == 4 {
			strip, n := gitVarint(e[p:])
			if n <= 0 || int(strip) > len(prev) {
				return nil, errGitUnsupported
			}
			p += n
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, errGitUnsupported
			}
			path = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), e[p:p+end]...)
			off += p + end + 1
		} else {
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, errGitUnsupported
			}
			path = e[p : p+end]
			off += (p + end + 8) &^ 7 // NUL padded to a multiple of eight
		}
		prev = path
		if bytes.Equal(path, []byte(".gitattributes")) || bytes.HasSuffix(path, []byte("/.gitattributes")) {
			out.attrs = true
		}
		stage := flags >> 12 & 3
		trusted := stage == 0 && flags&0x8000 == 0 && ext&(1<<14|1<<13) == 0 && (mode == 0o100644 || mode == 0o100755)
		if rel, ok := strings.CutPrefix(string(path), g.prefix); ok && trusted {
			ge.exec = mode == 0o100755
			out.entries[rel] = ge
		}
	}
	// Extensions: optional ones (an upper-case first letter) are skipped;
	// a required one (a split index "link", a sparse index "sdir") means
	// the entries above are not the whole story.
	for off+8 <= len(body) {
		sig := body[off : off+4]
		n := int(binary.BigEndian.Uint32(body[off+4:]))
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, errGitUnsupported
		}
		off += 8 + n
	}
	return out, nil
}

// gitVarint decodes git's offset encoding (used by index v4 and packs).
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 0x7f)
	i := 1
	for c&0x80 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0
		}
		c = b[i]
		i++
		v = (v+1)<<7 | uint64(c&0x7f)
	}
	return v, i
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
