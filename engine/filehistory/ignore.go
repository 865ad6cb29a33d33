package filehistory

import (
	"os"
	"path"
	"path/filepath"

	"github.com/tally-dev/tally/storage"
)

// ignoreRules returns the .gitignore files session r's manifests honour,
// by directory: those on disk when the session first changed something,
// read then (a rules-only walk) and kept in its record, so that an ignore
// file the agent writes or deletes later — a .gitignore of "*" — never
// hides the session's own writes from a manifest (they would look deleted
// by the next command and "changed outside Tally" for a rewind) nor
// reveals files it never saw (they would look created, and a rewind would
// delete them). w.mu must be held.
func (r *Recorder) ignoreRules(root *os.Root) (map[string]string, error) {
	if r.rules != nil {
		return r.rules, nil
	}
	w := r.w
	rec, err := w.session(r.session)
	if err != nil {
		return nil, err
	}
	if rec.IgnoreSet {
		r.rules = rec.Ignore
		if r.rules == nil {
			r.rules = map[string]string{}
		}
		return r.rules, nil
	}
	found := map[string]string{}
	findIgnoreFiles(root, "", nil, found)
	err = w.st.Update(func(tx *storage.Tx) error {
		rec, err := w.loadSession(tx, r.session)
		if err != nil {
			return err
		}
		if !rec.IgnoreSet {
			rec.Ignore, rec.IgnoreSet = found, true
		}
		found = rec.Ignore
		return w.saveSession(tx, r.session, rec)
	})
	if err != nil {
		return nil, err
	}
	r.rules = found
	if r.rules == nil {
		r.rules = map[string]string{}
	}
	return r.rules, nil
}

// findIgnoreFiles walks the directory rel, whose parent's rules are rules,
// for the .gitignore files on disk, honouring each in the directories under
// it, and keeps their text in found.
func findIgnoreFiles(root *os.Root, rel string, rules []ignoreRule, found map[string]string) {
	name := "."
	if rel != "" {
		name = filepath.FromSlash(rel)
	}
	// Listed by path, not through root: a directory read in an os.Root
	// has every entry's stat taken, which a walk for names alone does not
	// need. Only names are taken from it; the files are read through root.
	ents, err := os.ReadDir(filepath.Join(root.Name(), name))
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			if data, err := root.ReadFile(filepath.Join(name, ".gitignore")); err == nil {
				found[rel] = string(data)
				rules = withRules(rules, rel, string(data), true)
			}
		}
	}
	for _, e := range ents {
		if !e.Type().IsDir() || e.Name() == ".git" {
			continue
		}
		child := path.Join(rel, e.Name())
		if !ignored(rules, child, true) {
			findIgnoreFiles(root, child, rules, found)
		}
	}
}
