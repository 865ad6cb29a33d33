package workbench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// benchQueries are the queries the search benchmarks cycle through: a
// rare word, common words, two words, a word in no message, words of two
// letters (no trigram to filter with), Cyrillic and a code identifier.
var benchQueries = []string{"quokka", "the", "mul overflow", "retry budget", "zzqx", "go", "qz", "ошибка", "func mul_overflow_guard"}

// searchFixture writes sessions sessions of 40 messages of 300 to 2,000
// bytes into a store without the index, the way a Tally before it left
// them, and returns the data directory.
func searchFixture(b *testing.B, sessions int) (dir string) {
	b.Helper()
	dir = b.TempDir()
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(sessions), 1))
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range sessions {
		if err := corpusSession(st, r, fmt.Sprintf("session-%04d", i), 40, 300, 2000, at.Add(time.Duration(i)*time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// bucketMB is the megabytes of pages the top-level buckets named hold in
// the closed store file at path.
func bucketMB(b *testing.B, path string, names ...string) []float64 {
	b.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	out := make([]float64, len(names))
	_ = db.View(func(tx *bolt.Tx) error {
		for i, n := range names {
			if bk := tx.Bucket([]byte(n)); bk != nil {
				s := bk.Stats()
				out[i] = float64(s.BranchAlloc+s.LeafAlloc) / (1 << 20)
			}
		}
		return nil
	})
	return out
}

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

func worst(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	return float64(slices.Max(d)) / float64(time.Millisecond)
}

// BenchmarkSearch runs each query through the old scan (referenceSearch)
// and through the index, alternating which goes first, on stores of 50,
// 200 and 1,000 sessions; it reports the medians and the slowest query
// of each in milliseconds, the time the first search took to build the
// index, and the megabytes of the logs and of the index, and logs each
// query's hits (200+ when more matched) and medians. ns/op is left out: one op is one query through both.
// Run it with a modest -benchtime, such as 27x (each query three times).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{50, 200, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			dir := searchFixture(b, n)
			w, _, err := Open(dir, func(string) string { return "" })
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := w.store.EnsureSearchIndex(); err != nil {
				b.Fatal(err)
			}
			build := time.Since(start)
			var scan, index []time.Duration
			perScan, perIndex := map[string][]time.Duration{}, map[string][]time.Duration{}
			found := map[string]string{}
			i := 0
			for b.Loop() {
				q := benchQueries[i%len(benchQueries)]
				for k := range 2 {
					start := time.Now()
					var hits []SearchHit
					if (i+k)%2 == 0 {
						var truncated bool
						hits, truncated, err = w.Search(q)
						found[q] = fmt.Sprint(len(hits))
						if truncated {
							found[q] += "+"
						}
						index = append(index, time.Since(start))
						perIndex[q] = append(perIndex[q], time.Since(start))
					} else {
						hits, _, err = referenceSearch(w, q)
						scan = append(scan, time.Since(start))
						perScan[q] = append(perScan[q], time.Since(start))
					}
					if err != nil {
						b.Fatal(err)
					}
					if q == "zzqx" && len(hits) > 0 {
						b.Fatalf("%q found %d hits", q, len(hits))
					}
				}
				i++
			}
			for _, q := range benchQueries {
				if len(perIndex[q]) > 0 {
					b.Logf("%-26q %4s hits   scan %8.1f ms   index %6.1f ms", q, found[q], median(perScan[q]), median(perIndex[q]))
				}
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(median(scan), "scan-median-ms")
			b.ReportMetric(worst(scan), "scan-max-ms")
			b.ReportMetric(median(index), "index-median-ms")
			b.ReportMetric(worst(index), "index-max-ms")
			b.ReportMetric(build.Seconds(), "build-s")
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			mb := bucketMB(b, filepath.Join(dir, "tally.db"), "log", "search")
			b.ReportMetric(mb[0], "log-MB")
			b.ReportMetric(mb[1], "index-MB")
		})
	}
}

// BenchmarkSearchAppend is the write cost of the index: one committed
// message of about 1 KB (its own fsync'd Update) appended to a store of
// 200 sessions kept with the index and to a copy of it kept without,
// alternating. It reports the median milliseconds of each.
func BenchmarkSearchAppend(b *testing.B) {
	dir := searchFixture(b, 200)
	plainDir := b.TempDir()
	copyFile(b, filepath.Join(dir, "tally.db"), filepath.Join(plainDir, "tally.db"))
	w, _, err := Open(dir, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := w.store.EnsureSearchIndex(); err != nil {
		b.Fatal(err)
	}
	plain, err := storage.Open(filepath.Join(plainDir, "tally.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	r := rand.New(rand.NewPCG(9, 9))
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var indexed, without []time.Duration
	i := 0
	for b.Loop() {
		data, err := transcript.Encode(corpusMessage(r, 1000, at))
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("session-%04d", r.IntN(200))
		for k := range 2 {
			start := time.Now()
			if (i+k)%2 == 0 {
				_, err = w.store.Append(id, 1, data)
				indexed = append(indexed, time.Since(start))
			} else {
				_, err = plain.Append(id, 1, data)
				without = append(without, time.Since(start))
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		i++
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(indexed), "indexed-median-ms")
	b.ReportMetric(median(without), "plain-median-ms")
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
