package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// testRules index a message's bytes as its text, leaving out messages
// that start with "skip" and panicking on "panic"; a rebuild record is
// "CYCLE SHA", the blob holding one text a line.
func testRules(version string) *SearchRules {
	return &SearchRules{
		Version: version,
		Message: func(data []byte) (string, bool) {
			if bytes.HasPrefix(data, []byte("panic")) {
				panic("a message the rules cannot read")
			}
			return string(data), !bytes.HasPrefix(data, []byte("skip"))
		},
		Kinds: []Kind{KindRebuild},
		Record: func(kind Kind, data []byte, blob func(string) ([]byte, error)) []RecordText {
			c, sha, _ := strings.Cut(string(data), " ")
			cycle, _ := strconv.Atoi(c)
			b, err := blob(sha)
			if err != nil {
				return nil
			}
			var out []RecordText
			for line := range strings.SplitSeq(string(b), "\n") {
				out = append(out, RecordText{Cycle: cycle, Text: line})
			}
			return out
		},
	}
}

func openRules(t testing.TB, path string, rules *SearchRules) *Store {
	t.Helper()
	s, err := Open(path, Options{Search: rules})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// referenceMatches finds the texts of a session the slow way: every
// message and record, read, lowercased and searched.
func referenceMatches(t testing.TB, s *Store, rules *SearchRules, id string, words []string) []TextMatch {
	t.Helper()
	var out []TextMatch
	has := func(text string) bool {
		low := strings.ToLower(text)
		for _, w := range words {
			if !strings.Contains(low, w) {
				return false
			}
		}
		return true
	}
	err := s.View(func(tx *Tx) error {
		type keyed struct {
			k []byte
			m TextMatch
		}
		var all []keyed
		cycles, err := tx.Cycles(id)
		if err != nil {
			return err
		}
		for _, c := range cycles {
			recs, err := tx.Log(id, c)
			if err != nil {
				return err
			}
			for i, r := range recs {
				if text, ok := (&searchRules{SearchRules: *rules}).message(r.Data); ok && has(text) {
					all = append(all, keyed{docKey(0, uint32(c), classLog, r.Seq, 0), TextMatch{Cycle: c, Seq: r.Seq, Position: i, Text: strings.ToLower(text)}})
				}
			}
		}
		recs, err := tx.Records(KindRebuild, id)
		if err != nil {
			return err
		}
		for _, r := range recs {
			for i, text := range rules.Record(KindRebuild, r.Data, tx.rawBlob) {
				if text.Cycle >= 1 && has(text.Text) {
					all = append(all, keyed{docKey(0, uint32(text.Cycle), 0, r.Seq, uint32(i)), TextMatch{Cycle: text.Cycle, Kind: KindRebuild, Seq: r.Seq, Position: i, Text: strings.ToLower(text.Text)}})
				}
			}
		}
		slices.SortFunc(all, func(a, b keyed) int { return bytes.Compare(a.k, b.k) })
		for _, a := range all {
			out = append(out, a.m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func matchTexts(t testing.TB, s *Store, id string, words []string) ([]TextMatch, bool) {
	t.Helper()
	var got []TextMatch
	var indexed bool
	err := s.View(func(tx *Tx) (err error) {
		got, indexed, err = tx.MatchTexts(id, NewTextQuery(words))
		return err
	})
	if err != nil {
		t.Fatalf("MatchTexts(%q, %q): %v", id, words, err)
	}
	return got, indexed
}

// dumpIndex is every key and value of the search index, sessions whose
// bucket holds nothing left out.
func dumpIndex(t testing.TB, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.View(func(tx *Tx) error {
		out["version"] = string(tx.btx.Bucket(bucketMeta).Get(keySearchVersion))
		ss := tx.btx.Bucket(bucketSearch)
		if ss == nil {
			return nil
		}
		return ss.ForEachBucket(func(id []byte) error {
			return ss.Bucket(id).ForEach(func(k, v []byte) error {
				out[string(id)+"/"+string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var corpusWords = []string{"alpha", "beta", "gamma", "Delta", "ÉTÉ", "mul", "overflow", "x", "ab", "retry", "budget", "func", "日本語", "zz"}

func randomText(r *rand.Rand) string {
	n := 1 + r.IntN(30)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString([]string{" ", "\n", "", "-"}[r.IntN(4)])
		}
		b.WriteString(corpusWords[r.IntN(len(corpusWords))])
	}
	if r.IntN(20) == 0 {
		return "skip " + b.String()
	}
	return b.String()
}

func randomQuery(r *rand.Rand) []string {
	n := 1 + r.IntN(3)
	var q []string
	for range n {
		w := strings.ToLower(corpusWords[r.IntN(len(corpusWords))])
		if len(w) > 2 && r.IntN(3) == 0 {
			w = w[1:] // a part of a word; may cut a rune in two
		}
		q = append(q, w)
	}
	return q
}

// The index answers exactly what reading every message answers, through
// appends, rewrites, superseded records, deleted sessions and writes by a
// Store without rules; a rebuild gives the same index byte for byte.
func TestSearchIndexMatchesAScanOfARandomHistory(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			rules := testRules("v1")
			path := filepath.Join(t.TempDir(), "tally.db")
			s := openRules(t, path, rules)
			defer func() { s.Close() }()
			if err := s.EnsureSearchIndex(); err != nil {
				t.Fatal(err)
			}
			ids := []string{"a", "b", "c", "d", "e"}
			for _, id := range ids {
				mustPutSession(t, s, id)
			}
			for step := range 300 {
				id := ids[r.IntN(len(ids))]
				cycle := 1 + r.IntN(3)
				var err error
				switch op := r.IntN(20); {
				case op < 12:
					_, err = s.Append(id, cycle, []byte(randomText(r)))
				case op < 14:
					var data [][]byte
					for range r.IntN(4) {
						data = append(data, []byte(randomText(r)))
					}
					err = s.ReplaceLog(id, cycle, data)
				case op < 16:
					err = s.Update(func(tx *Tx) error {
						sha, err := tx.PutBlob([]byte(randomText(r) + "\n" + randomText(r)))
						if err != nil {
							return err
						}
						_, err = tx.AddRecord(KindRebuild, id, fmt.Appendf(nil, "%d %s", cycle, sha))
						return err
					})
				case op < 17:
					_, err = s.AddRecord(KindLedger, id, []byte("alpha row"))
				case op < 18:
					if err = s.DeleteSession(id); err == nil {
						mustPutSession(t, s, id)
					}
				default:
					// Another Store without rules writes, then the index
					// catches up.
					s.Close()
					plain := openRules(t, path, nil)
					_, err = plain.Append(id, cycle, []byte(randomText(r)))
					plain.Close()
					s = openRules(t, path, rules)
					if _, indexed := matchTexts(t, s, id, nil); indexed {
						t.Fatalf("step %d: a session written without the rules is reported indexed", step)
					}
					if err == nil {
						err = s.EnsureSearchIndex()
					}
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if step%10 != 0 {
					continue
				}
				for range 5 {
					q := randomQuery(r)
					for _, id := range ids {
						got, indexed := matchTexts(t, s, id, q)
						want := referenceMatches(t, s, rules, id, q)
						if !indexed || !slices.Equal(got, want) {
							t.Fatalf("step %d, session %s, query %q: index %v (indexed %v), scan %v", step, id, q, got, indexed, want)
						}
					}
				}
			}
			kept := dumpIndex(t, s)
			if err := s.RebuildSearchIndex(); err != nil {
				t.Fatal(err)
			}
			built := dumpIndex(t, s)
			if len(kept) < 10 || !mapsEqual(kept, built) {
				t.Errorf("the index kept by the writes (%d keys) differs from a rebuild (%d keys)", len(kept), len(built))
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A write indexes what it adds and touches nothing else of the index.
func TestSearchIndexAppendWritesOnlyTheNewMessage(t *testing.T) {
	s := openRules(t, filepath.Join(t.TempDir(), "tally.db"), testRules("v1"))
	defer s.Close()
	if err := s.EnsureSearchIndex(); err != nil {
		t.Fatal(err)
	}
	mustPutSession(t, s, "s")
	for i := range 200 {
		if _, err := s.Append("s", 1, fmt.Appendf(nil, "message %d about alpha", i)); err != nil {
			t.Fatal(err)
		}
	}
	before := dumpIndex(t, s)
	if _, err := s.Append("s", 1, []byte("one more about beta")); err != nil {
		t.Fatal(err)
	}
	after := dumpIndex(t, s)
	var changed []string
	for k, v := range after {
		if w, ok := before[k]; !ok || w != v {
			changed = append(changed, k)
		}
	}
	// The message's signature and text, and the watermark (its position
	// is the log's kept length, not a count of the index's own).
	if len(changed) != 3 || len(after) != len(before)+2 {
		t.Errorf("one append changed %d keys of the index (%q); want 3", len(changed), changed)
	}
	got, indexed := matchTexts(t, s, "s", []string{"beta"})
	if !indexed || len(got) != 1 || got[0].Position != 200 || got[0].Cycle != 1 {
		t.Errorf("matches %+v (indexed %v); want the message at position 200", got, indexed)
	}
}

func TestSearchIndexFollowsRewritesRecordsAndDeletes(t *testing.T) {
	s := openRules(t, filepath.Join(t.TempDir(), "tally.db"), testRules("v1"))
	defer s.Close()
	if err := s.EnsureSearchIndex(); err != nil {
		t.Fatal(err)
	}
	mustPutSession(t, s, "s")
	for _, m := range []string{"Why does Mul overflow?", "skip mul overflow", "Mul uses int8"} {
		if _, err := s.Append("s", 1, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	positions := func(words ...string) string {
		t.Helper()
		got, indexed := matchTexts(t, s, "s", words)
		if !indexed {
			t.Fatalf("session s is not indexed")
		}
		var out []string
		for _, m := range got {
			out = append(out, fmt.Sprintf("%d%s:%d", m.Cycle, m.Kind, m.Position))
		}
		return strings.Join(out, " ")
	}
	if got := positions("mul"); got != "1:0 1:2" {
		t.Errorf("mul: %s; want 1:0 1:2 (the skipped message left out)", got)
	}
	// A compaction: the cycle's log is rewritten, the old messages are
	// kept in a record.
	err := s.Update(func(tx *Tx) error {
		sha, err := tx.PutBlob([]byte("Why does Mul overflow?\nMul uses int8"))
		if err != nil {
			return err
		}
		if err := tx.ReplaceLog("s", 1, [][]byte{[]byte("summary: int8 math")}); err != nil {
			return err
		}
		_, err = tx.AddRecord(KindRebuild, "s", []byte("1 "+sha))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := positions("mul"); got != "1rebuild:0 1rebuild:1" {
		t.Errorf("mul after the rewrite: %s; want the two superseded texts", got)
	}
	if got := positions("int8"); got != "1rebuild:1 1:0" {
		t.Errorf("int8: %s; want the superseded text, then the summary", got)
	}
	if _, err := s.Append("s", 1, []byte("after int8")); err != nil {
		t.Fatal(err)
	}
	if got := positions("int8"); got != "1rebuild:1 1:0 1:1" {
		t.Errorf("int8 after an append: %s", got)
	}
	if got := positions("in"); got != "1rebuild:1 1:0 1:1" {
		t.Errorf("a word of two letters: %s", got)
	}
	if _, err := s.Append("s", 2, []byte("panic here")); err != nil {
		t.Fatalf("rules that panic fail the append: %v", err)
	}
	if err := s.DeleteSession("s"); err != nil {
		t.Fatal(err)
	}
	if kept := dumpIndex(t, s); len(kept) != 1 {
		t.Errorf("the deleted session left %d keys in the index", len(kept)-1)
	}
	mustPutSession(t, s, "s")
	if got, indexed := matchTexts(t, s, "s", []string{"int8"}); !indexed || len(got) != 0 {
		t.Errorf("a new session under the deleted one's ID matches %v (indexed %v)", got, indexed)
	}
}

// Changing the rules' version rebuilds the index under the new rules;
// a Store without rules cannot build one.
func TestSearchIndexIsRebuiltForNewRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tally.db")
	s := openRules(t, path, testRules("v1"))
	mustPutSession(t, s, "s")
	if _, err := s.Append("s", 1, []byte("skip alpha")); err != nil {
		t.Fatal(err)
	}
	if _, indexed := matchTexts(t, s, "s", []string{"alpha"}); indexed {
		t.Error("a store whose index was never built reports the session indexed")
	}
	if err := s.EnsureSearchIndex(); err != nil {
		t.Fatal(err)
	}
	if got, indexed := matchTexts(t, s, "s", []string{"alpha"}); !indexed || len(got) != 0 {
		t.Errorf("v1 leaves skipped messages out: %v, %v", got, indexed)
	}
	s.Close()

	v2 := testRules("v2")
	v2.Message = func(data []byte) (string, bool) { return string(data), true }
	s = openRules(t, path, v2)
	defer s.Close()
	if _, indexed := matchTexts(t, s, "s", []string{"alpha"}); indexed {
		t.Error("an index built under other rules is reported current")
	}
	if err := s.EnsureSearchIndex(); err != nil {
		t.Fatal(err)
	}
	if got, indexed := matchTexts(t, s, "s", []string{"alpha"}); !indexed || len(got) != 1 {
		t.Errorf("after the rebuild under v2: %v, %v", got, indexed)
	}

	plain := openRules(t, filepath.Join(t.TempDir(), "tally.db"), nil)
	defer plain.Close()
	if err := plain.EnsureSearchIndex(); !errors.Is(err, ErrInvalid) {
		t.Errorf("EnsureSearchIndex without rules: %v; want ErrInvalid", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{Search: &SearchRules{Kinds: []Kind{"nope"}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("rules with an unknown kind: %v; want ErrInvalid", err)
	}
}

// A build commits in batches and a damaged entry in the index is an
// error, never a panic.
func TestSearchIndexBuildsInBatchesAndReportsDamage(t *testing.T) {
	s := openRules(t, filepath.Join(t.TempDir(), "tally.db"), testRules("v1"))
	defer s.Close()
	big := strings.Repeat("alpha beta gamma ", 1<<16) // 1 MiB
	for i := range 20 {
		id := fmt.Sprintf("s%02d", i)
		mustPutSession(t, s, id)
		if _, err := s.Append(id, 1, []byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EnsureSearchIndex(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if got, indexed := matchTexts(t, s, fmt.Sprintf("s%02d", i), []string{"gamma alpha"}); !indexed || len(got) != 1 {
			t.Fatalf("session %d: %v, %v", i, got, indexed)
		}
	}
	err := s.db.Update(func(btx *bolt.Tx) error {
		b := btx.Bucket(bucketSearch).Bucket([]byte("s03"))
		return b.Put(docKey(prefixDoc, 1, classLog, 1, 0), []byte{1, 2})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		_, _, err := tx.MatchTexts("s03", NewTextQuery([]string{"alpha"}))
		return err
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("a damaged signature: %v; want ErrCorrupt", err)
	}
}
