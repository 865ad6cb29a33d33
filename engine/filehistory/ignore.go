package filehistory

import (
	"io/fs"
	"os"

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
	s := &scanner{root: root, out: manifest{}, infos: map[string]fs.FileInfo{}, found: map[string]string{}, rulesOnly: true}
	s.walk("", nil)
	err = w.st.Update(func(tx *storage.Tx) error {
		rec, err := w.loadSession(tx, r.session)
		if err != nil {
			return err
		}
		if !rec.IgnoreSet {
			rec.Ignore, rec.IgnoreSet = s.found, true
		}
		s.found = rec.Ignore
		return w.saveSession(tx, r.session, rec)
	})
	if err != nil {
		return nil, err
	}
	r.rules = s.found
	if r.rules == nil {
		r.rules = map[string]string{}
	}
	return r.rules, nil
}
