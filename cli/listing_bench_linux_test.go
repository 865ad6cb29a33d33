package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/storage"
)

// BenchmarkSessionsPeakRSS measures how much the peak resident memory of
// the process grows while `tally sessions` lists a data file holding one
// session of about 34 MB (3,400 messages of 10 KB): the listing should
// read the sessions' headers, not every page of their logs.
//
//	go test -run '^$' -bench SessionsPeakRSS -benchtime 5x ./cli/
func BenchmarkSessionsPeakRSS(b *testing.B) {
	data := b.TempDir()
	seedBigSession(b, data, 3400, 10<<10)
	var grew int64
	for b.Loop() {
		base := resetPeakRSS(b)
		if code := Main([]string{"sessions", "--data", data}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("tally sessions exited %d", code)
		}
		grew = max(grew, procStatusKB(b, "VmHWM")-base)
	}
	fi, _ := os.Stat(filepath.Join(data, "tally.db"))
	b.ReportMetric(float64(fi.Size())/(1<<20), "MB-file")
	b.ReportMetric(float64(grew)/1024, "MB-peak-growth")
}

// seedBigSession stores a session of n messages of size bytes each under
// data.
func seedBigSession(b *testing.B, data string, n, size int) {
	b.Helper()
	w, _, err := workbench.Open(data, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	w.Close()
	st, err := storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	body := bytes.Repeat([]byte("x"), size)
	err = st.Update(func(tx *storage.Tx) error {
		if err := tx.PutSession(storage.Session{ID: "big", Title: "big", Cycle: 1}); err != nil {
			return err
		}
		for i := range n {
			msg := fmt.Sprintf(`{"role":"user","text":"%d %s"}`, i, body)
			if _, err := tx.Append("big", 1, []byte(msg)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// resetPeakRSS resets the process's peak resident size to its current
// one (Linux's clear_refs 5) and returns it in KiB.
func resetPeakRSS(b *testing.B) int64 {
	b.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS here: %v", err)
	}
	return procStatusKB(b, "VmRSS")
}

// procStatusKB reads one "Name: N kB" line of /proc/self/status.
func procStatusKB(b *testing.B, name string) int64 {
	b.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", name)
	return 0
}
