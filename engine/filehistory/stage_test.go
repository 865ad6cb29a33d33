package filehistory

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
)

func TestStageKeepsContentAcrossFlushAndCompaction(t *testing.T) {
	s := newStage(t.TempDir())
	var sums [][32]byte
	var datas [][]byte
	for i := range 3000 { // more than one buffer's worth
		d := bytes.Repeat([]byte(fmt.Sprintf("content %d;", i)), 40)
		sum := sha256.Sum256(d)
		s.put(sum, d)
		sums, datas = append(sums, sum), append(datas, d)
	}
	check := func(i int, want bool) {
		t.Helper()
		got, ok := s.get(sums[i])
		if ok != want || ok && !bytes.Equal(got, datas[i]) {
			t.Fatalf("entry %d: found %v, want %v (or wrong content)", i, ok, want)
		}
	}
	for i := range sums {
		check(i, true)
	}
	s.compact(func(sum [32]byte) bool { return sum[0]%2 == 0 })
	for i, sum := range sums {
		check(i, sum[0]%2 == 0)
	}
	s.put(sums[1], datas[1])
	check(1, true)
}

// Small content is staged as it is and large content compressed, and both
// come back as they were put; a compaction copies the file only when most
// of it is dead.
func TestStageCompactsOnlyWhenMostIsDead(t *testing.T) {
	s := newStage(t.TempDir())
	var sums [][32]byte
	var datas [][]byte
	for i := range 400 {
		n := 40 // about 500 bytes: kept as it is
		if i%2 == 1 {
			n = 800 // about 10 KB: compressed
		}
		d := bytes.Repeat([]byte(fmt.Sprintf("content %d;", i)), n)
		sum := sha256.Sum256(d)
		s.put(sum, d)
		sums, datas = append(sums, sum), append(datas, d)
	}
	check := func(live func(int) bool) {
		t.Helper()
		for i := range sums {
			got, ok := s.get(sums[i])
			if ok != live(i) || ok && !bytes.Equal(got, datas[i]) {
				t.Fatalf("entry %d (%d bytes): found %v, want %v (or wrong content)", i, len(datas[i]), ok, live(i))
			}
		}
	}
	check(func(int) bool { return true })
	before := s.size
	if big := sums[1]; s.idx[big].n >= uint32(len(datas[1])) || !s.idx[big].packed {
		t.Errorf("a %d-byte content is staged in %d bytes, packed %v", len(datas[1]), s.idx[big].n, s.idx[big].packed)
	}

	alive := map[[32]byte]bool{}
	for i, sum := range sums {
		alive[sum] = i%10 != 0 // a tenth dies
	}
	s.compact(func(sum [32]byte) bool { return alive[sum] })
	check(func(i int) bool { return i%10 != 0 })
	if s.size != before {
		t.Errorf("a compaction with a tenth dead rewrote the file: %d bytes, was %d", s.size, before)
	}

	for i, sum := range sums {
		alive[sum] = i%10 == 1 // most die
	}
	s.compact(func(sum [32]byte) bool { return alive[sum] })
	check(func(i int) bool { return i%10 == 1 })
	if s.size >= before/2 {
		t.Errorf("a compaction with most dead left %d bytes of %d", s.size, before)
	}
}

// A command that changes a small file (staged as it is) and a large one
// (staged compressed) in a plain folder: both earlier contents are stored
// and restored byte for byte.
func TestShellRestoresSmallAndLargeStagedFiles(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		dir := t.TempDir()
		small := "small file\n"
		large := strings.Repeat("a line of a large file that compresses\n", 400) // about 16 KB
		writeFile(t, dir, "small.txt", small)
		writeFile(t, dir, "sub/large.txt", large)
		w := openWS(t, openStore(t), dir, Limits{})
		r := recorder(t, w, "s")
		_ = r.BeginTurn(1)
		ch := shell(t, r, "echo changed > small.txt && echo changed > sub/large.txt")
		if len(ch.Modified) != 2 || len(ch.NotRestorable) != 0 {
			t.Fatalf("changes %+v", ch)
		}
		restoreTurn(t, w, 1)
		if got := readFile(t, dir, "small.txt"); got != small {
			t.Errorf("small.txt restored as %q", got)
		}
		if got := readFile(t, dir, "sub/large.txt"); got != large {
			t.Errorf("sub/large.txt restored as %d bytes, want %d", len(got), len(large))
		}
	})
}
