package agent

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/storage"
)

// BenchmarkShellSnapshotAsSessionsTakeIt is the snapshot before a shell
// command in a 10,000-file / 200 MB workspace with the limits sessions use
// (rewind.Limits: the secret-file deny list and the credential scan of
// every file whose content is read), first on an empty store, then again
// when nothing changed. engine/checkpoint's BenchmarkShellSnapshot is the
// same without the scan.
func BenchmarkShellSnapshotAsSessionsTakeIt(b *testing.B) {
	const files, total = 10_000, 200 << 20
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(benchSource(rng, total/files)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	open := func() (*storage.Store, *filehistory.Recorder) {
		st, err := storage.Open(filepath.Join(b.TempDir(), "tally.db"), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ws, err := filehistory.Open(st, dir, rewind.Limits(0, nil))
		if err != nil {
			b.Fatal(err)
		}
		r, err := ws.Recorder("s")
		if err != nil {
			b.Fatal(err)
		}
		return st, r
	}
	b.Run("first", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			st, r := open()
			b.StartTimer()
			if err := r.BeforeShell(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = st.Close()
			b.StartTimer()
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		b.StopTimer()
		st, r := open()
		defer st.Close()
		if err := r.BeforeShell(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for range b.N {
			if err := r.BeforeShell(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchSource returns about n bytes of Go-like text.
func benchSource(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		fmt.Fprintf(&sb, "func f%d(x int) int { return x*%d + %d } // key %d\n", rng.IntN(1e6), rng.IntN(100), rng.IntN(1000), rng.IntN(1e9))
	}
	return sb.String()
}
