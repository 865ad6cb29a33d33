package filehistory

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchTree returns a workspace of n files of 1–2 KB, 100 to a directory
// two levels deep, with a .gitignore, as a plain directory or a git
// repository with everything committed. Trees are kept under os.TempDir,
// keyed by size and kind, since the large ones take a while to make.
func benchTree(b *testing.B, n int, repo bool) string {
	b.Helper()
	kind := "plain"
	if repo {
		kind = "git"
	}
	dir := filepath.Join(os.TempDir(), "tally-filehistory-bench", fmt.Sprintf("%s-%d", kind, n))
	done := dir + ".ok"
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	if repo {
		if _, err := exec.LookPath("git"); err != nil {
			b.Skip("git is not installed")
		}
	}
	b.Logf("making a %s tree of %d files in %s", kind, n, dir)
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	old := time.Now().Add(-24 * time.Hour)
	writeFile(b, dir, ".gitignore", "*.log\n/build/\nnode_modules/\n*.tmp\n.cache/\n")
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("m%02d", i/10000), fmt.Sprintf("pkg%03d", i/100%100), fmt.Sprintf("file%06d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sourceText(rng, 1024+rng.IntN(1024))), 0o644); err != nil {
			b.Fatal(err)
		}
		// Older than the index will be, so that no file is racily clean.
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	if repo {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "tree"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// rssBytes returns the resident set size of the process (Linux; 0
// elsewhere).
func rssBytes(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

func heapInuse() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse)
}

// BenchmarkShellCommand measures what checkpoints add to a shell command
// that changes one file, in workspaces of 1,000, 10,000 and 100,000 small
// files, plain and in a git repository: "first" is the first command of a
// process (BeforeShell and AfterShell on a fresh workspace: nothing known
// yet), "each" every later one; heap-MB is the heap the workspace holds
// after its first command (after a GC) and rss-MB the growth of the
// process's resident set over it. Run one size per process for clean
// memory figures, e.g.
//
//	go test ./engine/filehistory/ -run '^$' -bench 'ShellCommand/git/100000/first' -benchtime 1x
func BenchmarkShellCommand(b *testing.B) {
	for _, kind := range []string{"plain", "git"} {
		for _, n := range []int{1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				dir := benchTree(b, n, kind == "git")
				victim := filepath.Join(dir, "m00", "pkg000", "file000000.go")
				orig, err := os.ReadFile(victim)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { // the tree is reused: leave it as it was
					_ = os.WriteFile(victim, orig, 0o644)
					old := time.Now().Add(-24 * time.Hour)
					_ = os.Chtimes(victim, old, old)
				})
				edits := 0
				command := func() {
					edits++
					data := append(bytes.Clone(orig), fmt.Sprintf("// edit %d\n", edits)...)
					if err := os.WriteFile(victim, data, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				open := func() *Recorder {
					st := openStore(b)
					r := recorder(b, openWS(b, st, dir, Limits{}), "s")
					if err := r.BeginTurn(1); err != nil {
						b.Fatal(err)
					}
					return r
				}
				around := func(r *Recorder) {
					if err := r.BeforeShell(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					command()
					b.StartTimer()
					ch, err := r.AfterShell()
					if err != nil {
						b.Fatal(err)
					}
					if len(ch.Modified) != 1 {
						b.Fatalf("changes %+v; want the one file changed", ch)
					}
				}
				b.Run("first", func(b *testing.B) {
					var heap, rss, peak float64
					var cpu time.Duration
					for i := range b.N {
						b.StopTimer()
						r := open()
						h0, r0 := heapInuse(), rssBytes("VmRSS")
						c0 := cpuTime()
						b.StartTimer()
						around(r)
						b.StopTimer()
						cpu += cpuTime() - c0
						if i == 0 {
							heap, rss, peak = heapInuse()-h0, rssBytes("VmRSS")-r0, rssBytes("VmHWM")
						}
						_ = r.Close()
						b.StartTimer()
					}
					b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
					b.ReportMetric(heap/(1<<20), "heap-MB")
					b.ReportMetric(rss/(1<<20), "rss-MB")
					b.ReportMetric(peak/(1<<20), "peak-rss-MB")
				})
				b.Run("prepared", func(b *testing.B) {
					// The first command when the turn's snapshot was taken
					// beforehand (Prepare, as sessions do when a turn starts).
					for range b.N {
						b.StopTimer()
						r := open()
						if err := r.Prepare(context.Background()); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						around(r)
						b.StopTimer()
						_ = r.Close()
						b.StartTimer()
					}
				})
				b.Run("each", func(b *testing.B) {
					b.StopTimer()
					r := open()
					around(r)
					c0 := cpuTime()
					b.StartTimer()
					for range b.N {
						around(r)
					}
					b.StopTimer()
					b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
					_ = r.Close()
				})
			})
		}
	}
}
