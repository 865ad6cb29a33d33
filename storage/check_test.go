package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tally-dev/tally/storage/storagetest"
)

// A file damaged past its header opened (the header is fine), the damaged
// page was reported only by the reads that reached it, and a write
// elsewhere in the file went through on top of the damage. Open now
// checks the page tree once: reads still work, every write is refused
// with a message saying how to recover, and the file is left as it was.
func TestDamagedDataFileRefusesWrites(t *testing.T) {
	path, _ := filledDB(t)
	before := storagetest.DamageLeaf(t, path)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("the damaged file could not be opened for reading: %v", err)
	}
	defer s.Close()
	if _, err := s.Session("s"); err != nil {
		t.Errorf("an undamaged record could not be read: %v", err)
	}
	err = s.PutSession(Session{ID: "new", Title: "t", Workspace: "/w", Created: time.Now(), Updated: time.Now(), Cycle: 1})
	wantErr(t, err, ErrCorrupt)
	if err != nil && (!strings.Contains(err.Error(), "tally export") || !strings.Contains(err.Error(), "move the file aside")) {
		t.Errorf("the refusal does not say how to recover: %v", err)
	}
	if !errors.Is(s.Damage(), ErrCorrupt) {
		t.Errorf("Damage() = %v", s.Damage())
	}
	s.Close()
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Error("a write reached the damaged file")
	}
}

// A healthy store passes the check and takes writes.
func TestHealthyFilePassesTheCheck(t *testing.T) {
	path, _ := filledDB(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Damage() != nil {
		t.Fatalf("a healthy file failed the check: %v", s.Damage())
	}
	if err := s.PutSetting("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkOpenCheck measures Open (with its page-tree check) of a store
// of about b.N-independent size: -benchtime=1x -bench OpenCheck/200MB.
func BenchmarkOpenCheck(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"2MB", 1000}, {"20MB", 10000}, {"200MB", 100000}} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "tally.db")
			s, err := Open(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.PutSession(Session{ID: "s", Title: "t", Workspace: "/w", Created: time.Now(), Updated: time.Now(), Cycle: 1}); err != nil {
				b.Fatal(err)
			}
			val := bytes.Repeat([]byte("x"), 2000)
			for done := 0; done < c.n; done += 1000 {
				err := s.Update(func(tx *Tx) error {
					for range 1000 {
						if _, err := tx.Append("s", 1, val); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
			b.ResetTimer()
			for b.Loop() {
				if err := checkTree(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNoWriteLandsBeforeDamageIsRuledOut is the regression test for a
// damaged file written when Open did not check its pages (a file over
// CheckBytes was never checked): the check now runs in the background for
// such a file, and the first write waits for it and is refused.
func TestNoWriteLandsBeforeDamageIsRuledOut(t *testing.T) {
	defer func(v int64) { checkInline = v }(checkInline)
	checkInline = 1 // every file takes the background path
	path, _ := filledDB(t)
	before := storagetest.DamageLeaf(t, path)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("the damaged file could not be opened for reading: %v", err)
	}
	defer s.Close()
	err = s.PutSession(Session{ID: "new", Title: "t", Workspace: "/w", Created: time.Now(), Updated: time.Now(), Cycle: 1})
	wantErr(t, err, ErrCorrupt)
	if !errors.Is(s.Damage(), ErrCorrupt) {
		t.Errorf("Damage() = %v", s.Damage())
	}
	s.Close()
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Error("a write reached the damaged file")
	}
	// A healthy file on the same path takes writes once checked.
	healthy, _ := filledDB(t)
	h, err := Open(healthy, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.PutSetting("k", []byte("v")); err != nil {
		t.Fatalf("a healthy large file refused a write: %v", err)
	}
}

// TestGarbageOnAFreePageIsNoDamage pins why a write may land on a file
// with garbage on a page of its freelist: bbolt never reads a free page
// and writes a page whole when it reuses one, so the data stays intact and
// bbolt's own consistency check passes afterwards.
func TestGarbageOnAFreePageIsNoDamage(t *testing.T) {
	path, ps := filledDB(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(func(tx *Tx) error { return tx.DeleteSession("s") }) // frees most pages
	s.Close()
	f, _ := os.Open(path)
	fi, _ := f.Stat()
	m, _ := pickMeta(f, fi.Size())
	free, err := checkFreelist(f, m, uint64(ps))
	f.Close()
	if err != nil || len(free) == 0 {
		t.Fatalf("no free page to damage (%v)", err)
	}
	b := fileBytes(t, path)
	copy(b[int(free[0])*ps:(int(free[0])+1)*ps], bytes.Repeat([]byte{0xA5}, ps))
	os.WriteFile(path, b, 0o600)

	s, err = Open(path, Options{})
	if err != nil || s.Damage() != nil {
		t.Fatalf("Open = %v, damage %v", err, s.Damage())
	}
	defer s.Close()
	mustPutSession(t, s, "t")
	if err := s.Update(func(tx *Tx) error {
		for i := range 50 {
			if _, err := tx.Append("t", 1, bytes.Repeat([]byte{byte(i)}, 3000)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt's check after writing over the free page: %v", err)
	}
}

// FuzzCheckFile feeds whole files to the checks Open runs before bbolt
// maps a file: they never panic or hang, whatever the bytes.
func FuzzCheckFile(f *testing.F) {
	path, _ := filledDB(f)
	good, _ := os.ReadFile(path)
	f.Add(good[:8192])
	f.Add(good)
	f.Add(bytes.Repeat([]byte{0xAB}, 4096*4))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if checkFile(p) == nil {
			_ = checkTree(p)
		}
	})
}
