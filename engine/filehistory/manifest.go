package filehistory

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	ignore "github.com/sabhiram/go-gitignore"
)

// entry is one path of a workspace manifest: its stat and its image.
type entry struct {
	Size  int64
	Mtime int64
	Mode  fs.FileMode
	Ino   uint64
	Ctime int64
	Img   Image
}

func statOf(fi fs.FileInfo) entry {
	ino, ctime := statExtra(fi)
	return entry{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: fi.Mode(), Ino: ino, Ctime: ctime}
}

// sameStat reports whether e and o have the same stat, so that the content
// read for one can be reused for the other.
func (e entry) sameStat(o entry) bool {
	return e.Size == o.Size && e.Mtime == o.Mtime && e.Mode == o.Mode && e.Ino == o.Ino && e.Ctime == o.Ctime
}

// manifest maps slash-separated workspace paths to entries. Directories are
// not listed; ignored paths and .git are left out.
type manifest map[string]entry

// ignoreRule is one .gitignore file and the directory it applies to.
type ignoreRule struct {
	base string // slash-separated, "" for the workspace root
	gi   *ignore.GitIgnore
}

func ignored(rules []ignoreRule, rel string, dir bool) bool {
	for _, r := range rules {
		p := rel
		if r.base != "" {
			p = strings.TrimPrefix(rel, r.base+"/")
		}
		if dir {
			p += "/"
		}
		if r.gi.MatchesPath(p) {
			return true
		}
	}
	return false
}

// scanner walks a workspace for one manifest.
type scanner struct {
	root  *os.Root
	prev  manifest
	out   manifest
	todo  []string // paths whose stat changed: to read
	infos map[string]fs.FileInfo
	// rules are the .gitignore files the walk honours, by the
	// slash-separated directory they are in ("" for the root): the ones
	// the session started with (see Recorder.ignoreRules). Nil reads the
	// .gitignore files on disk and keeps them in found; rulesOnly then
	// walks for them alone, reading no other file.
	rules     map[string]string
	found     map[string]string
	rulesOnly bool
}

// dirRules adds the ignore rules of the directory rel to rules.
func (s *scanner) dirRules(rel, name string, ents []fs.DirEntry, rules []ignoreRule) []ignoreRule {
	text, ok := s.rules[rel]
	if s.rules == nil {
		for _, e := range ents {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				if data, err := s.root.ReadFile(filepath.Join(name, ".gitignore")); err == nil {
					text, ok = string(data), true
					s.found[rel] = text
				}
			}
		}
	}
	if !ok {
		return rules
	}
	return append(rules[:len(rules):len(rules)], ignoreRule{base: rel, gi: ignore.CompileIgnoreLines(strings.Split(text, "\n")...)})
}

func (s *scanner) walk(rel string, rules []ignoreRule) {
	name := "."
	if rel != "" {
		name = filepath.FromSlash(rel)
	}
	d, err := s.root.Open(name)
	if err != nil {
		return // vanished or unreadable: nothing in it can be recorded
	}
	ents, _ := d.ReadDir(-1)
	d.Close()
	rules = s.dirRules(rel, name, ents, rules)
	for _, e := range ents {
		if e.Name() == ".git" {
			continue
		}
		child := path.Join(rel, e.Name())
		isDir := e.Type().IsDir()
		if ignored(rules, child, isDir) {
			continue
		}
		if isDir {
			s.walk(child, rules)
			continue
		}
		if s.rulesOnly {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // vanished since the directory was read
		}
		en := statOf(fi)
		if old, ok := s.prev[child]; ok && old.sameStat(en) {
			en.Img = old.Img
			s.out[child] = en
			continue
		}
		s.out[child] = en
		s.todo = append(s.todo, child)
		s.infos[child] = fi
	}
}

// scan takes a manifest of the workspace under the ignore rules of
// session r (see Recorder.ignoreRules), reusing the images of paths whose
// stat is unchanged since the last one and reading the others, so that
// every file's content is either in the store or staged in memory when scan
// returns (see Workspace.staged). w.mu must be held.
func (w *Workspace) scan(root *os.Root, r *Recorder) (manifest, error) {
	rules, err := r.ignoreRules(root)
	if err != nil {
		return nil, err
	}
	s := &scanner{root: root, prev: w.cache, out: manifest{}, infos: map[string]fs.FileInfo{}, rules: rules}
	s.walk("", nil)

	type result struct {
		rel string
		img Image
		b   *blob
	}
	lim := w.limits
	jobs := make(chan string)
	results := make(chan result)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rel := range jobs {
				img, data := imageOf(root, filepath.FromSlash(rel), s.infos[rel], lim)
				r := result{rel: rel, img: img}
				if img.Kind == File {
					if _, ok := w.sizes[img.SHA]; !ok { // w.sizes is not written during a scan
						r.b = &blob{sha: img.SHA, data: compress(data)}
					}
				}
				results <- r
			}
		}()
	}
	go func() {
		for _, rel := range s.todo {
			jobs <- rel
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()

	if w.staged == nil {
		w.staged = map[string][]byte{}
	}
	for r := range results {
		en := s.out[r.rel]
		en.Img = r.img
		s.out[r.rel] = en
		if r.b != nil {
			w.staged[r.b.sha] = r.b.data
		}
	}
	return s.out, nil
}
