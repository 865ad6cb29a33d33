package filehistory

import (
	"bytes"
	"crypto/sha256"
	"fmt"
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
