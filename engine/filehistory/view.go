package filehistory

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// view is the manifest of a workspace under one set of ignore rules (the
// sessions of a workspace usually share one), kept up to date from one
// snapshot to the next: on Linux by watching every directory it lists, so
// that a snapshot only looks at the paths that changed since the last one;
// elsewhere, or when watching fails, by walking the whole tree again.
type view struct {
	key    string            // fingerprint of rules
	rules  map[string]string // .gitignore text by directory
	files  map[string]entry  // slash-separated path -> entry
	dirs   map[string]*dirInfo
	linked map[string]struct{} // hard-linked files: stat at every snapshot
	wt     *watcher            // nil: the next snapshot walks everything
	// noWatch is set once the watch limit was hit: walking stays the way.
	noWatch bool
	// pending holds, for every recorder whose command is running, the
	// state before the command of each path that changed since its
	// BeforeShell (kAbsent: it did not exist).
	pending map[*Recorder]map[string]entry
	used    uint64
}

// dirInfo is one directory a view lists.
type dirInfo struct {
	rules []ignoreRule // the rules that apply to its entries
	ino   uint64
}

// forceWalk, set by tests, makes every snapshot walk the whole workspace
// as if watching had failed.
var forceWalk bool

func rulesKey(rules map[string]string) string {
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(rules[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// maxViews bounds the views a workspace keeps; sessions with other ignore
// rules than the ones kept walk from scratch.
const maxViews = 4

// view returns the view for the ignore rules rules (see Recorder.ignoreRules),
// making it if need be. w.mu must be held.
func (w *Workspace) view(rules map[string]string) *view {
	key := rulesKey(rules)
	w.clock++
	if v := w.views[key]; v != nil {
		v.used = w.clock
		return v
	}
	for len(w.views) >= maxViews {
		var victim *view
		for _, v := range w.views {
			if len(v.pending) == 0 && (victim == nil || v.used < victim.used) {
				victim = v
			}
		}
		if victim == nil {
			break
		}
		victim.wt.close()
		delete(w.views, victim.key)
	}
	v := &view{key: key, rules: rules, files: map[string]entry{}, dirs: map[string]*dirInfo{}, linked: map[string]struct{}{}, pending: map[*Recorder]map[string]entry{}, used: w.clock}
	if w.views == nil {
		w.views = map[string]*view{}
	}
	w.views[key] = v
	return v
}

// set makes e (or, when !present, nothing) the state of p, noting the
// earlier state for every running command that has not seen p change yet.
func (v *view) set(p string, e entry, present bool) {
	old, had := v.files[p]
	if !had && !present || had && present && old.sameStat(e) && old.sameImage(e) {
		return
	}
	if !had {
		old = entry{kind: kAbsent}
	}
	for _, ov := range v.pending {
		if _, ok := ov[p]; !ok {
			ov[p] = old
		}
	}
	if present {
		v.files[p] = e
	} else {
		delete(v.files, p)
		delete(v.linked, p)
	}
}

// refresh brings v up to date with the workspace: from the events of the
// watcher when it has them all, else by walking everything.
func (w *Workspace) refresh(root *os.Root, v *view, stop func() bool) {
	if v.wt != nil && !forceWalk {
		dirty := map[string]struct{}{}
		if v.wt.drain(func(rel string) { dirty[rel] = struct{}{} }) {
			for p := range v.linked {
				dirty[p] = struct{}{}
			}
			w.resync(root, v, dirty)
			return
		}
	}
	w.walkAll(root, v, stop)
}

// walkAll takes the manifest by walking the whole workspace, watching every
// directory it lists where that is possible.
//
// stop, when not nil, ends the walk early; the view then stays as it was,
// and its next refresh walks again. Only a full walk can be stopped: the
// incremental one (resync) has already read the events it works from.
func (w *Workspace) walkAll(root *os.Root, v *view, stop func() bool) {
	w.walks++
	v.wt.close()
	v.wt = nil
	s := w.newWalker(root, v)
	s.stop = stop
	s.files = make(map[string]entry, len(v.files))
	if watchSupported && !v.noWatch && !forceWalk {
		if wt, err := newWatcher(); err == nil {
			s.wt = wt
		}
	}
	s.git = w.gitIndex()
	s.walkAll()
	if s.stopped() {
		s.wt.close() // cancelled: the view stays as it was, and the next snapshot walks
		return
	}
	if s.sawAttributes {
		s.untrustGit()
	}
	if s.watchErr != nil {
		s.wt.close()
		s.wt = nil
		if s.watchErr == errWatchLimit {
			v.noWatch = true
		}
	}
	s.read()
	if s.stopped() {
		s.wt.close()
		return
	}
	if len(v.pending) > 0 {
		for p, e := range s.files {
			v.set(p, e, true)
		}
		for p := range v.files {
			if _, ok := s.files[p]; !ok {
				v.set(p, entry{}, false)
			}
		}
	}
	v.files, v.dirs, v.linked, v.wt = s.files, s.dirs, s.linked, s.wt
}

// resync updates v from the paths the watcher named: each is looked at
// again, a new directory is walked (and watched), and a directory that went
// away or was replaced drops everything under it. Removals come first, so
// that a directory moved within the workspace is forgotten at its old path
// before it is walked at its new one.
func (w *Workspace) resync(root *os.Root, v *view, dirty map[string]struct{}) {
	paths := make([]string, 0, len(dirty))
	for p := range dirty {
		if p != "" && !underGit(p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	type item struct {
		rel   string
		fi    fs.FileInfo
		rules []ignoreRule
	}
	var items []item
	drop := map[string]bool{}
	for _, p := range paths {
		pd := v.dirs[parentOf(p)]
		fi, err := root.Lstat(filepath.FromSlash(p))
		if pd == nil || err != nil || ignored(pd.rules, p, fi.IsDir()) {
			// Gone, or not a path the view lists.
			if _, ok := v.dirs[p]; ok {
				drop[p] = true
			}
			v.set(p, entry{}, false)
			continue
		}
		if d, ok := v.dirs[p]; ok {
			if ino, _, _ := statExtra(fi); fi.IsDir() && d.ino == ino {
				continue // its own watch covers what is in it
			}
			drop[p] = true
		}
		items = append(items, item{p, fi, pd.rules})
	}
	if len(drop) > 0 {
		v.dropDirs(drop)
	}
	s := w.newWalker(root, v)
	s.wt = v.wt
	for _, it := range items {
		parent := parentOf(it.rel)
		if v.dirs[parent] == nil && s.dirs[parent] == nil {
			continue // under a directory dropped just now
		}
		if _, seen := s.files[it.rel]; seen {
			continue
		}
		if _, seen := s.dirs[it.rel]; seen {
			continue
		}
		if it.fi.IsDir() {
			v.set(it.rel, entry{}, false) // a file replaced by a directory
			ino, _, _ := statExtra(it.fi)
			s.walk(it.rel, it.rules, ino)
			continue
		}
		s.file(it.rel, it.fi)
	}
	if s.watchErr != nil {
		// What was walked is right; what changes later in the directories
		// that could not be watched is caught by walking everything next.
		v.wt.close()
		v.wt = nil
		if s.watchErr == errWatchLimit {
			v.noWatch = true
		}
	}
	s.read()
	for p, e := range s.files {
		v.set(p, e, true)
	}
	for d, di := range s.dirs {
		v.dirs[d] = di
	}
	for p := range s.linked {
		v.linked[p] = struct{}{}
	}
}

// underGit reports whether slash-separated p is or is inside a .git
// directory, which manifests leave out.
func underGit(p string) bool {
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return p == ".git"
		}
		if p[:i] == ".git" {
			return true
		}
		p = p[i+1:]
	}
}

// parentOf returns the directory of slash-separated p, "" for the root.
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// dropDirs forgets the directories in drop and everything under them.
func (v *view) dropDirs(drop map[string]bool) {
	under := func(p string) bool {
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			if drop[p[:i]] {
				return true
			}
		}
		return false
	}
	for p := range v.files {
		if under(p) {
			v.set(p, entry{}, false)
		}
	}
	var gone []string
	for d := range v.dirs {
		if drop[d] || under(d) {
			gone = append(gone, d)
		}
	}
	slices.Sort(gone)
	for _, d := range gone {
		delete(v.dirs, d)
		if v.wt != nil {
			v.wt.remove(d)
		}
	}
}
