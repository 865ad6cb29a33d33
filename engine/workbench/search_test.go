package workbench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
	"github.com/tally-dev/tally/storage/storagetest"
)

// compareSearch runs queries through Search and the old scan.
func compareSearch(t *testing.T, w *Workbench, r *rand.Rand, what string, n int) (truncated int) {
	t.Helper()
	queries := []string{"the", "a", "MUL overflow", "quokka", "日本", "é"}
	for range n {
		queries = append(queries, corpusQuery(r))
	}
	for _, q := range queries {
		got, gotTrunc, err := w.Search(q)
		if err != nil {
			t.Fatalf("%s: Search(%q): %v", what, q, err)
		}
		want, wantTrunc, err := referenceSearch(w, q)
		if err != nil {
			t.Fatalf("%s: the scan of %q: %v", what, q, err)
		}
		sameHits(t, what, q, got, want, gotTrunc, wantTrunc)
		if gotTrunc {
			truncated++
		}
	}
	return truncated
}

// allIndexed fails unless the index answers for every session.
func allIndexed(t *testing.T, w *Workbench) {
	t.Helper()
	list, err := w.store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	err = w.store.View(func(tx *storage.Tx) error {
		for _, s := range list {
			if _, ok, err := tx.MatchTexts(s.ID, storage.NewTextQuery(nil)); err != nil || !ok {
				t.Errorf("session %s: indexed %v, %v", s.ID, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The index gives exactly the hits of the old scan (order, snippets,
// superseded and archived messages, the cap) on a random history that
// keeps changing: appends, compactions, renames, deletes, new sessions,
// writes by a store without the index, a rebuild.
func TestSearchGivesTheHitsOfTheOldScan(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ids := []string{}
	newSession := func() {
		id := fmt.Sprintf("s%02d", len(ids))
		ids = append(ids, id)
		// Every third session shares its Updated time with another.
		if err := corpusSession(w.store, r, id, 5+r.IntN(30), 20, 400, at.Add(time.Duration(len(ids)/3)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for range 12 {
		newSession()
	}
	truncated := compareSearch(t, w, r, "start", 10)
	allIndexed(t, w)
	rounds := 30
	if testing.Short() {
		rounds = 8
	}
	for round := range rounds {
		id := ids[r.IntN(len(ids))]
		var err error
		switch op := r.IntN(10); {
		case op < 5:
			err = w.store.Update(func(tx *storage.Tx) error {
				s, err := tx.Session(id)
				if err != nil {
					return nil // deleted
				}
				data, _ := transcript.Encode(corpusMessage(r, 30+r.IntN(300), at))
				_, err = tx.Append(id, max(s.Cycle, 1), data)
				return err
			})
		case op < 7:
			err = w.store.Update(func(tx *storage.Tx) error {
				s, err := tx.Session(id)
				if err != nil {
					return nil
				}
				return corpusCompact(tx, r, id, max(s.Cycle, 1), at)
			})
		case op < 8:
			if err = w.Rename(id, corpusText(r, 20)); err != nil && !isNotFound(err) {
				t.Fatal(err)
			}
			err = nil
		case op < 9:
			err = w.Delete(id)
		default:
			newSession()
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		truncated += compareSearch(t, w, r, fmt.Sprintf("round %d", round), 3)
	}
	allIndexed(t, w)
	w.Close()

	// A store without the index (an older Tally) writes; the next search
	// reindexes what it changed.
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:4] {
		data, _ := transcript.Encode(transcript.UserText("", "written by an older Tally: quokka", at))
		if _, err := st.Append(id, 1, data); err != nil && !isNotFound(err) {
			t.Fatal(err)
		}
	}
	err = st.Update(func(tx *storage.Tx) error {
		if _, err := tx.Session(ids[5]); err != nil {
			return nil
		}
		return corpusCompact(tx, r, ids[5], 1, at)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	w, _, err = Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	truncated += compareSearch(t, w, r, "after an older Tally wrote", 10)
	allIndexed(t, w)
	if err := w.ReindexSearch(); err != nil {
		t.Fatal(err)
	}
	truncated += compareSearch(t, w, r, "after a rebuild", 10)
	if truncated == 0 {
		t.Error("no query reached MaxSearchHits; the cap went untested")
	}
}

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }

// A damaged store refuses to build the index; Search reads every
// session's history instead and finds what the old scan found.
func TestSearchOnADamagedStoreReadsTheHistory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tally.db")
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 30 {
		if err := corpusSession(st, r, fmt.Sprintf("s%02d", i), 30, 300, 1500, at.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	storagetest.DamageLeaf(t, path)
	w, _, err := Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Damage() == nil {
		t.Fatal("the damaged store opened clean")
	}
	for _, q := range []string{"the", "quokka", "mul overflow", corpusQuery(r), corpusQuery(r)} {
		got, gotTrunc, gotErr := w.Search(q)
		want, wantTrunc, wantErr := referenceSearch(w, q)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("query %q: Search error %v, the scan's %v", q, gotErr, wantErr)
		}
		sameHits(t, "damaged", q, got, want, gotTrunc, wantTrunc)
	}
}
