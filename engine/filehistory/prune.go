package filehistory

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tally-dev/tally/storage"
)

// pruneLocked keeps the stored content under the size limit. It first drops
// content that no checkpoint and no current manifest needs, then drops whole
// turns, oldest first: those of closed sessions before those of open ones,
// and never the latest turn of a session. A dropped turn keeps the list of
// its paths, marked not restorable, and shows in Unrestorable; a path that
// did not exist stays restorable (restoring it removes the file). w.mu must
// be held.
func (w *Workspace) pruneLocked() error {
	limit := w.limits.StoreBytes
	if w.total <= limit {
		return nil
	}
	deleted := map[string]bool{}
	total := w.total
	err := w.st.Update(func(tx *storage.Tx) error {
		recs := map[string]*sessionRec{}
		err := tx.CheckpointValues(w.ns, sectionSessions, func(id string, v []byte) error {
			rec := &sessionRec{}
			if json.Unmarshal(v, rec) != nil {
				return nil // a damaged record needs nothing; it is reported when read
			}
			recs[id] = rec
			return nil
		})
		if err != nil {
			return err
		}
		sweep := func() error {
			keep := w.needed(recs)
			for sha, n := range w.sizes {
				if keep[sha] || deleted[sha] {
					continue
				}
				if err := tx.DeleteCheckpoint(w.ns, sectionBlobs, sha); err != nil {
					return err
				}
				deleted[sha] = true
				total -= int64(n)
			}
			return nil
		}
		if err := sweep(); err != nil {
			return err
		}
		type cand struct {
			id   string
			turn int
		}
		var cands []cand
		for id, rec := range recs {
			for i, t := range rec.Turns {
				if !t.Dropped && i < len(rec.Turns)-1 && t.holdsContent() {
					cands = append(cands, cand{id, i})
				}
			}
		}
		slices.SortFunc(cands, func(a, b cand) int {
			ra, rb := recs[a.id], recs[b.id]
			switch {
			case ra.Closed != rb.Closed:
				if ra.Closed {
					return -1
				}
				return 1
			case !ra.Used.Equal(rb.Used):
				return ra.Used.Compare(rb.Used)
			case a.id != b.id:
				return strings.Compare(a.id, b.id)
			}
			return a.turn - b.turn
		})
		changed := map[string]bool{}
		for _, c := range cands {
			if total <= limit {
				break
			}
			t := &recs[c.id].Turns[c.turn]
			t.Dropped = true
			for p, img := range t.Before {
				if img.Kind == File || img.Kind == Link {
					t.Before[p] = Image{Kind: Unrestorable, Dropped: true, Why: fmt.Sprintf("its checkpoint was dropped to keep the checkpoint store under %s", byteCount(limit))}
				}
			}
			changed[c.id] = true
			if err := sweep(); err != nil {
				return err
			}
		}
		for id := range changed {
			if err := w.saveSession(tx, id, recs[id]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot drop old checkpoints to respect the size limit: %w", err)
	}
	for sha := range deleted {
		delete(w.sizes, sha)
	}
	w.total = total
	return nil
}

// needed returns the content that the sessions' checkpoints and the
// workspace's current manifests refer to. The last write of a session only
// counts while the session has a restorable turn.
func (w *Workspace) needed(recs map[string]*sessionRec) map[string]bool {
	keep := map[string]bool{}
	add := func(img Image) {
		if img.Kind == File {
			keep[img.SHA] = true
		}
	}
	for _, v := range w.views {
		for _, e := range v.files {
			if e.kind == kFile && !e.git {
				add(e.image())
			}
		}
		for _, ov := range v.pending {
			for _, e := range ov {
				if e.kind == kFile && !e.git {
					add(e.image())
				}
			}
		}
	}
	for _, rec := range recs {
		live := false
		for _, t := range rec.Turns {
			if t.Dropped {
				continue
			}
			live = true
			for _, img := range t.Before {
				add(img)
			}
		}
		if live {
			for _, img := range rec.Last {
				add(img)
			}
		}
	}
	return keep
}

// holdsContent reports whether dropping t could free stored content.
func (t turnRec) holdsContent() bool {
	for _, img := range t.Before {
		if img.Kind == File {
			return true
		}
	}
	return false
}
