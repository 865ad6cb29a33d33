package storage

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkAppend measures one committed step: a single ~2 KB message per
// Update, including the fsync.
func BenchmarkAppend(b *testing.B) {
	s := openTest(b)
	mustPutSession(b, s, "s")
	msg := bytes.Repeat([]byte("x"), 2048)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := s.Append("s", 1, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReopen measures opening a store that holds 10,000 messages of
// ~2 KB, spread over 10 sessions, and reading one session's log.
func BenchmarkReopen(b *testing.B) {
	const sessions, perSession = 10, 1000
	path := filepath.Join(b.TempDir(), "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	msg := bytes.Repeat([]byte("y"), 2048)
	for i := range sessions {
		id := fmt.Sprintf("session-%02d", i)
		mustPutSession(b, s, id)
		err := s.Update(func(tx *Tx) error {
			for range perSession {
				if _, err := tx.Append(id, 1, msg); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs, err := s.Log("session-05", 1)
		if err != nil || len(recs) != perSession {
			b.Fatalf("Log = %d records, %v", len(recs), err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendSearchIndex is the write cost of the search index: one
// ~1 KB message per fsync'd Update, appended in turn to a store that keeps
// the index (testRules) and to one that does not, both holding 200
// sessions of 40 messages. It reports the median milliseconds of each
// and the kilobytes of pages each commit wrote.
func BenchmarkAppendSearchIndex(b *testing.B) {
	const sessions = 200
	text := func(i int) []byte {
		return fmt.Appendf(nil, "%d %s", i, bytes.Repeat([]byte("alpha beta gamma delta mul overflow "), 28))
	}
	open := func(rules *SearchRules) *Store {
		s := openRules(b, filepath.Join(b.TempDir(), "tally.db"), rules)
		b.Cleanup(func() { s.Close() })
		if rules != nil {
			if err := s.EnsureSearchIndex(); err != nil {
				b.Fatal(err)
			}
		}
		for i := range sessions {
			id := fmt.Sprintf("session-%04d", i)
			mustPutSession(b, s, id)
			err := s.Update(func(tx *Tx) error {
				for j := range 40 {
					if _, err := tx.Append(id, 1, text(j)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		return s
	}
	stores := []*Store{open(testRules("v1")), open(nil)}
	times := make([][]time.Duration, 2)
	written := make([]int64, 2)
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("session-%04d", i%sessions)
		for k := range 2 {
			s := stores[(i+k)%2]
			st := s.db.Stats()
			before := st.TxStats.GetPageAlloc()
			start := time.Now()
			if _, err := s.Append(id, 1, text(i)); err != nil {
				b.Fatal(err)
			}
			times[(i+k)%2] = append(times[(i+k)%2], time.Since(start))
			st = s.db.Stats()
			written[(i+k)%2] += st.TxStats.GetPageAlloc() - before
		}
		i++
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(med(times[0]), "indexed-ms")
	b.ReportMetric(med(times[1]), "plain-ms")
	b.ReportMetric(float64(written[0])/float64(i)/1024, "indexed-KB/commit")
	b.ReportMetric(float64(written[1])/float64(i)/1024, "plain-KB/commit")
}
