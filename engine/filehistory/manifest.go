package filehistory

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreRule is one .gitignore file and the directory it applies to.
type ignoreRule struct {
	base string            // slash-separated, "" for the workspace root
	gi   gitignore.Matcher // go-git's matcher, for patterns that are not simple
	// simple, when gi is nil, holds the file's patterns, all of a kind
	// (see simplePattern) that is matched on a name without regular
	// expressions, with the same result as gi would give.
	simple []simplePattern
}

// simplePattern is a pattern made of letters, digits, '.', '_', '-' and
// '*' only, with an optional leading '!' (negation), leading '/'
// (anchored to the ignore file's directory) and trailing '/' (directories
// only): most .gitignore lines. Matching it needs no regular expression,
// which matters when a walk asks about 100,000 paths.
type simplePattern struct {
	glob             string
	neg, dir, rooted bool
}

func simplePatterns(lines []string) ([]simplePattern, bool) {
	var out []simplePattern
	for _, l := range lines {
		l = strings.TrimRight(l, "\r ") // git keeps leading spaces, drops trailing ones
		if l == "" || l[0] == '#' {
			continue
		}
		var p simplePattern
		if l[0] == '!' {
			p.neg, l = true, l[1:]
		}
		if strings.HasSuffix(l, "/") {
			p.dir, l = true, l[:len(l)-1]
		}
		if strings.HasPrefix(l, "/") {
			p.rooted, l = true, l[1:]
		}
		if l == "" || strings.Contains(l, "**") {
			return nil, false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '*') {
				return nil, false
			}
		}
		p.glob = l
		out = append(out, p)
	}
	return out, true
}

// matches reports whether the rule ignores rel (relative to its base).
func (r ignoreRule) matches(rel string, dir bool) bool {
	if r.gi != nil {
		return r.gi.Match(strings.Split(rel, "/"), dir)
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	hit := false
	for _, p := range r.simple {
		if p.dir && !dir || hit != p.neg {
			continue // cannot match, or cannot change the outcome
		}
		subject := name
		if p.rooted {
			subject = rel
		}
		if ok, _ := path.Match(p.glob, subject); ok {
			hit = !p.neg
		}
	}
	return hit
}

func ignored(rules []ignoreRule, rel string, dir bool) bool {
	for _, r := range rules {
		p := rel
		if r.base != "" {
			p = strings.TrimPrefix(rel, r.base+"/")
		}
		if r.matches(p, dir) {
			return true
		}
	}
	return false
}

// withRules adds the ignore file text of directory rel, if any, to rules.
func withRules(rules []ignoreRule, rel, text string, ok bool) []ignoreRule {
	if !ok {
		return rules
	}
	r := ignoreRule{base: rel}
	lines := strings.Split(text, "\n")
	if simple, ok := simplePatterns(lines); ok {
		r.simple = simple
	} else {
		r.gi = compileIgnore(lines)
	}
	return append(rules[:len(rules):len(rules)], r)
}

// compileIgnore returns go-git's matcher of the lines of one .gitignore
// file, read the way git reads it: comments and blank lines skipped.
func compileIgnore(lines []string) gitignore.Matcher {
	var ps []gitignore.Pattern
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(l, nil))
	}
	return gitignore.NewMatcher(ps)
}

// walker lists directories of a workspace into a view: every file whose
// stat differs from the view's entry is read (or, where git's index vouches
// for it, taken as the blob the index names), and every directory is
// watched when wt is set.
type walker struct {
	// stop, when set, ends a full walk early (a cancelled Prepare): the
	// walk then changes nothing (see walkAll).
	stop  func() bool
	w     *Workspace
	v     *view
	root  *os.Root
	wt    *watcher
	git   *gitIndex
	lim   Limits
	files map[string]entry // what was found
	dirs  map[string]*dirInfo
	// linked are the hard-linked files found: a change made through
	// another of their names is not seen by watching, so they are looked
	// at in every snapshot.
	linked        map[string]struct{}
	todo          []todo
	watchErr      error
	sawAttributes bool
}

// todo is a file to read; its stat is its entry in walker.files (a whole
// fs.FileInfo for each of 100,000 files would double the walk's memory).
type todo struct {
	rel string
}

// entryInfo presents an entry's stat as the fs.FileInfo imageOf needs.
type entryInfo struct{ e entry }

func (i entryInfo) Name() string       { return "" }
func (i entryInfo) Size() int64        { return i.e.Size }
func (i entryInfo) Mode() fs.FileMode  { return i.e.Mode }
func (i entryInfo) ModTime() time.Time { return time.Unix(0, i.e.Mtime) }
func (i entryInfo) IsDir() bool        { return i.e.Mode.IsDir() }
func (i entryInfo) Sys() any           { return nil }

// stopped reports whether the walk should end early.
func (s *walker) stopped() bool { return s.stop != nil && s.stop() }

func (w *Workspace) newWalker(root *os.Root, v *view) *walker {
	return &walker{w: w, v: v, root: root, lim: w.limits, files: map[string]entry{}, dirs: map[string]*dirInfo{}, linked: map[string]struct{}{}}
}

// dirTask is a directory to list: its path, the rules of its parent and
// its inode number.
type dirTask struct {
	rel   string
	rules []ignoreRule
	ino   uint64
}

// walk lists the directory rel, whose parent's rules are rules, and
// everything under it.
func (s *walker) walk(rel string, rules []ignoreRule, ino uint64) {
	for _, t := range s.list(dirTask{rel, rules, ino}) {
		s.walk(t.rel, t.rules, t.ino)
	}
}

// walkAll lists the whole workspace with a walker per processor, since
// listing and stat-ing 100,000 files is mostly waiting on system calls,
// then gathers what they found.
func (s *walker) walkAll() {
	n := max(1, runtime.GOMAXPROCS(0))
	if n == 1 {
		s.walk("", nil, 0)
		return
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	stack := []dirTask{{}}
	busy := 0
	subs := make([]*walker, n)
	var wg sync.WaitGroup
	for i := range subs {
		sub := &walker{w: s.w, v: s.v, root: s.root, wt: s.wt, git: s.git, lim: s.lim, files: map[string]entry{}, dirs: map[string]*dirInfo{}, linked: map[string]struct{}{}}
		subs[i] = sub
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			for {
				for len(stack) == 0 && busy > 0 {
					cond.Wait()
				}
				if len(stack) == 0 {
					mu.Unlock()
					cond.Broadcast()
					return
				}
				t := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				busy++
				mu.Unlock()
				more := sub.list(t)
				mu.Lock()
				busy--
				stack = append(stack, more...)
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
	for _, sub := range subs {
		for k, e := range sub.files {
			s.files[k] = e
		}
		for k, d := range sub.dirs {
			s.dirs[k] = d
		}
		for k := range sub.linked {
			s.linked[k] = struct{}{}
		}
		s.todo = append(s.todo, sub.todo...)
		s.sawAttributes = s.sawAttributes || sub.sawAttributes
		if s.watchErr == nil {
			s.watchErr = sub.watchErr
		}
	}
}

// list lists the directory of t and takes in its files, returning its
// subdirectories to list.
func (s *walker) list(t dirTask) []dirTask {
	if s.stopped() {
		return nil
	}
	rel, rules := t.rel, t.rules
	name := "."
	if rel != "" {
		name = filepath.FromSlash(rel)
	}
	if s.wt != nil && s.watchErr == nil {
		// Watched before it is read, so that nothing changed after the
		// read goes unseen.
		s.watchErr = s.wt.add(filepath.Join(s.w.dir, name), rel)
	}
	d, err := s.root.Open(name)
	if err != nil {
		return nil // vanished or unreadable: nothing in it can be recorded
	}
	ents, _ := d.ReadDir(-1)
	d.Close()
	text, ok := s.v.rules[rel]
	rules = withRules(rules, rel, text, ok)
	s.dirs[rel] = &dirInfo{rules: rules, ino: t.ino}
	var sub []dirTask
	for _, e := range ents {
		if e.Name() == ".git" {
			continue
		}
		child := path.Join(rel, e.Name())
		isDir := e.Type().IsDir()
		if ignored(rules, child, isDir) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // vanished since the directory was read
		}
		if isDir {
			ino, _, _ := statExtra(fi)
			sub = append(sub, dirTask{child, rules, ino})
			continue
		}
		s.file(child, fi)
	}
	return sub
}

// file takes in the file rel, whose Lstat result is fi.
func (s *walker) file(rel string, fi fs.FileInfo) {
	if path.Base(rel) == ".gitattributes" {
		s.sawAttributes = true
	}
	en := statOf(fi)
	if _, _, nlink := statExtra(fi); nlink > 1 && fi.Mode().IsRegular() {
		s.linked[rel] = struct{}{}
	}
	if old, ok := s.v.files[rel]; ok && old.sameStat(en) {
		s.files[rel] = old
		return
	}
	if s.git != nil && fi.Mode().IsRegular() && fi.Size() <= s.lim.FileBytes {
		if ge, ok := s.git.entries[rel]; ok && s.git.vouches(ge, en) {
			en.kind, en.git, en.isize = kFile, true, en.Size
			copy(en.sum[:], ge.id[:])
			s.files[rel] = en
			return
		}
	}
	s.files[rel] = en
	s.todo = append(s.todo, todo{rel})
}

// untrustGit reads the files taken from git's index after all: an
// attributes file was found, which may make the blob differ from the file.
func (s *walker) untrustGit() {
	for rel, e := range s.files {
		if !e.git {
			continue
		}
		fi, err := s.root.Lstat(filepath.FromSlash(rel))
		if err != nil {
			delete(s.files, rel)
			continue
		}
		s.files[rel] = statOf(fi)
		s.todo = append(s.todo, todo{rel})
	}
}

// read reads the files to read, in parallel, staging the content of
// those whose content is not stored yet (see Workspace.stage),
// so that every file found has its content in the store, the stage or git
// when read returns.
func (s *walker) read() {
	if len(s.todo) == 0 {
		return
	}
	out := make([]entry, len(s.todo))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range min(len(s.todo), max(1, runtime.GOMAXPROCS(0))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dirs dirRoot
			defer dirs.close()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(s.todo) || s.stopped() {
					return
				}
				t := s.todo[k]
				en := s.files[t.rel] // s.files is not written meanwhile
				root, name := dirs.of(s.root, filepath.FromSlash(t.rel))
				img, data := imageOf(root, name, entryInfo{en}, s.lim)
				en = en.withImage(img)
				if img.Kind == File {
					if _, ok := s.w.sizes[img.SHA]; !ok && !s.w.stage.has(en.sum) { // nor is w.sizes
						s.w.stage.put(en.sum, data)
					}
				}
				out[k] = en
			}
		}()
	}
	wg.Wait()
	for k, t := range s.todo {
		s.files[t.rel] = out[k]
	}
	s.todo = nil
}

// dirRoot is the directory of the last file a reader read, opened as a
// root of its own: the files to read come a directory at a time, and
// opening each by its name in that directory takes one system call
// instead of one per component of its path (os.Root resolves a path a
// component at a time).
type dirRoot struct {
	dir  string
	root *os.Root // nil: the workspace's root is used
}

// of returns the root to open name (a path in the workspace root ws) in,
// and name as seen from it.
func (d *dirRoot) of(ws *os.Root, name string) (*os.Root, string) {
	dir, base := filepath.Split(name)
	if dir == "" {
		return ws, name
	}
	if dir != d.dir || d.root == nil {
		d.close()
		r, err := ws.OpenRoot(dir)
		if err != nil {
			return ws, name // imageOf reports why it cannot be read
		}
		d.dir, d.root = dir, r
	}
	return d.root, base
}

func (d *dirRoot) close() {
	if d.root != nil {
		d.root.Close()
	}
	d.dir, d.root = "", nil
}
