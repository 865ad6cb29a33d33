package filehistory

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sourceText returns about n bytes of text that compresses like source code.
func sourceText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	sb.Grow(n + 128)
	for sb.Len() < n {
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&sb, "func f%d(x int) int { return x*%d + %d }\n", rng.IntN(1e6), rng.IntN(100), rng.IntN(1000))
		case 1:
			fmt.Fprintf(&sb, "\t// step %d keeps the value %x in range\n", rng.IntN(1000), rng.Uint32())
		case 2:
			fmt.Fprintf(&sb, "\tif v%d > %d {\n\t\treturn nil, fmt.Errorf(\"value %%d too large\", v%d)\n\t}\n", rng.IntN(50), rng.IntN(1e5), rng.IntN(50))
		default:
			fmt.Fprintf(&sb, "\tvar name%d = %q\n", rng.IntN(1e4), fmt.Sprint(rng.Uint64()))
		}
	}
	return sb.String()
}

// BenchmarkShellSnapshot measures the snapshot BeforeShell takes in a
// workspace of 10,000 files and 200 MB: the first one (every file read,
// hashed, compressed and stored) and a later one when nothing changed.
func BenchmarkShellSnapshot(b *testing.B) {
	const files, total = 10_000, 200 << 20
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sourceText(rng, total/files)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		var stored int64
		for range b.N {
			b.StopTimer()
			st := openStore(b)
			r := recorder(b, openWS(b, st, dir, Limits{}), "s")
			b.StartTimer()
			if err := r.BeforeShell(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			stored = storedBytes(r.Workspace())
			_ = st.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(stored), "stored-B")
	})
	b.Run("unchanged", func(b *testing.B) {
		st := openStore(b)
		r := recorder(b, openWS(b, st, dir, Limits{}), "s")
		if err := r.BeforeShell(); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if err := r.BeforeShell(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStorageGrowth measures how much a session that edits one 100 KB
// file 100 times, one edit per turn through BeforeWrite/AfterWrite, adds to
// the store: compressed content and growth of the database file.
func BenchmarkStorageGrowth(b *testing.B) {
	var stored, fileGrowth int64
	for range b.N {
		b.StopTimer()
		st := openStore(b)
		dir := b.TempDir()
		rng := rand.New(rand.NewPCG(3, 4))
		lines := strings.SplitAfter(sourceText(rng, 100<<10), "\n")
		writeFile(b, dir, "big.go", strings.Join(lines, ""))
		w := openWS(b, st, dir, Limits{})
		r := recorder(b, w, "s")
		fi0, _ := os.Stat(st.Path())
		b.StartTimer()
		for turn := 1; turn <= 100; turn++ {
			if err := r.BeginTurn(turn); err != nil {
				b.Fatal(err)
			}
			lines[rng.IntN(len(lines)-1)] = fmt.Sprintf("\t// edit %d\n", turn)
			agentWrite(b, r, "big.go", strings.Join(lines, ""))
		}
		b.StopTimer()
		stored = storedBytes(w)
		fi1, _ := os.Stat(st.Path())
		fileGrowth = fi1.Size() - fi0.Size()
		_ = st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(stored), "stored-B")
	b.ReportMetric(float64(fileGrowth), "dbgrowth-B")
}

// storedBytes is the total compressed size of the content kept for w.
func storedBytes(w *Workspace) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}
