package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != path {
		t.Errorf("Path = %q, want %q", s.Path(), path)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err = s.View(func(*Tx) error { return nil })
	wantErr(t, err, ErrClosed)
	_, err = s.Append("s", 1, nil)
	wantErr(t, err, ErrClosed)
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("mode of %s = %v, %v; want %v", p, fi.Mode().Perm(), err, want)
			}
		}
	}

	// An empty file, as left by a crash before initialization, is initialized.
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Open(empty, Options{})
	if err != nil {
		t.Fatalf("Open of an empty file: %v", err)
	}
	s.Close()
	checkDB(t, empty)

	_, err = Open("", Options{})
	wantErr(t, err, ErrInvalid)
}

func TestOpenLockedSameProcess(t *testing.T) {
	s := openTest(t)
	start := time.Now()
	s2, err := Open(s.Path(), Options{})
	elapsed := time.Since(start)
	if err == nil {
		s2.Close()
		t.Fatal("second Open succeeded")
	}
	wantErr(t, err, ErrLocked)
	t.Logf("second Open failed after %v: %v", elapsed, err)
	if elapsed > 5*time.Second {
		t.Errorf("second Open took %v", elapsed)
	}
	for _, want := range []string{s.Path(), "--data"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	start = time.Now()
	_, err = Open(s.Path(), Options{Timeout: -1})
	wantErr(t, err, ErrLocked)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Open with negative Timeout took %v", d)
	}
	// The first store is unaffected.
	if err := s.PutSetting("k", []byte("v")); err != nil {
		t.Error(err)
	}
}

func TestOpenNewerFormat(t *testing.T) {
	s := openTest(t)
	path := s.Path()
	if err := s.db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileBytes(t, path)
	_, err := Open(path, Options{})
	wantErr(t, err, ErrNewerFormat)
	if !strings.Contains(err.Error(), "upgrade Tally") {
		t.Errorf("error %q does not tell the user to upgrade", err)
	}
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Error("Open modified a newer-format file")
	}
	// Put the version back so the cleanup check can open the file.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion))
	}); err != nil {
		t.Fatal(err)
	}
}

// assertCorruptUntouched checks that Open refuses path with ErrCorrupt and
// leaves its bytes as they were.
func assertCorruptUntouched(t *testing.T, path string) {
	t.Helper()
	before := fileBytes(t, path)
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatalf("Open of a damaged file succeeded")
	}
	wantErr(t, err, ErrCorrupt)
	t.Logf("%v", err)
	for _, want := range []string{path, "untouched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Errorf("Open modified the damaged file")
	}
	// The lock was released: a second attempt fails the same way, at once.
	start := time.Now()
	if _, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("second Open = %v, want ErrCorrupt", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("second Open took %v; the file lock was not released", d)
	}
}

func TestOpenGarbage(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"text":   []byte("hello, this is not a database\n"),
		"zeros":  make([]byte, 64<<10),
		"random": pseudoRandom(64 << 10),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".db")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			assertCorruptUntouched(t, path)
		})
	}
}

func pseudoRandom(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// filledDB creates a closed database with enough data to span many pages and
// returns its path and page size.
func filledDB(t testing.TB) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPutSession(t, s, "s")
	err = s.Update(func(tx *Tx) error {
		for i := range 300 {
			if _, err := tx.Append("s", 1, bytes.Repeat([]byte{byte(i)}, 1500)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pageSize := s.db.Info().PageSize
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, pageSize
}

func TestOpenTruncated(t *testing.T) {
	path, pageSize := filledDB(t)
	full := fileBytes(t, path)
	for _, size := range []int{len(full) / 2, 3 * pageSize, 2*pageSize + 100, 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "truncated.db")
			if err := os.WriteFile(p, full[:size], 0o600); err != nil {
				t.Fatal(err)
			}
			assertCorruptUntouched(t, p)
		})
	}
}

func TestOpenDamagedPages(t *testing.T) {
	path, pageSize := filledDB(t)
	full := fileBytes(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m0, err0 := readMeta(f, 0)
	m1, err1 := readMeta(f, int64(pageSize))
	f.Close()
	if err0 != nil || err1 != nil {
		t.Fatal(err0, err1)
	}
	m := m0
	if m1.txid > m0.txid {
		m = m1
	}
	damage := func(t *testing.T, pages ...uint64) string {
		b := bytes.Clone(full)
		for _, pg := range pages {
			copy(b[int(pg)*pageSize:int(pg+1)*pageSize], bytes.Repeat([]byte{0xAB}, pageSize))
		}
		p := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("freelist", func(t *testing.T) { assertCorruptUntouched(t, damage(t, m.freelist)) })
	t.Run("root", func(t *testing.T) { assertCorruptUntouched(t, damage(t, m.root)) })
	freelistAt := int(m.freelist) * pageSize
	editFreelist := func(t *testing.T, edit func(page []byte)) string {
		b := bytes.Clone(full)
		edit(b[freelistAt:])
		p := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ne := binary.NativeEndian
	t.Run("freelist-count", func(t *testing.T) {
		assertCorruptUntouched(t, editFreelist(t, func(pg []byte) {
			ne.PutUint16(pg[10:], 0xFFFF)
			ne.PutUint64(pg[16:], 1<<40)
		}))
	})
	t.Run("freelist-entry", func(t *testing.T) {
		assertCorruptUntouched(t, editFreelist(t, func(pg []byte) {
			ne.PutUint16(pg[10:], 1)
			ne.PutUint64(pg[16:], m.pgid+100)
		}))
	})
	t.Run("all", func(t *testing.T) {
		var all []uint64
		for pg := uint64(2); pg < m.pgid; pg++ {
			all = append(all, pg)
		}
		assertCorruptUntouched(t, damage(t, all...))
	})
}

func TestOpenForeignBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bolt.Tx) error {
		_, err := btx.CreateBucket([]byte("someone-else"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	assertCorruptUntouched(t, path)
}

func TestDefaultPath(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	cases := []struct {
		goos string
		env  map[string]string
		home func() (string, error)
		want string
	}{
		{"linux", map[string]string{"TALLY_DATA": "/data", "XDG_DATA_HOME": "/xdg"}, home, filepath.Join("/data", "tally.db")},
		{"linux", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, filepath.Join("/xdg", "tally", "tally.db")},
		{"linux", map[string]string{"XDG_DATA_HOME": "relative"}, home, filepath.Join("/home/u", ".local", "share", "tally", "tally.db")},
		{"linux", nil, home, filepath.Join("/home/u", ".local", "share", "tally", "tally.db")},
		{"freebsd", nil, home, filepath.Join("/home/u", ".local", "share", "tally", "tally.db")},
		{"darwin", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, filepath.Join("/home/u", "Library", "Application Support", "Tally", "tally.db")},
		{"windows", map[string]string{"AppData": `C:\Users\u\AppData\Roaming`}, noHome, filepath.Join(`C:\Users\u\AppData\Roaming`, "Tally", "tally.db")},
		{"windows", map[string]string{"TALLY_DATA": "/data"}, noHome, filepath.Join("/data", "tally.db")},
		{"windows", nil, home, ""},
		{"linux", nil, noHome, ""},
		{"darwin", nil, noHome, ""},
	}
	for _, c := range cases {
		got, err := defaultPath(c.goos, func(k string) string { return c.env[k] }, c.home)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("defaultPath(%s, %v) = %q, %v; want %q", c.goos, c.env, got, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "TALLY_DATA") {
			t.Errorf("error %q does not suggest TALLY_DATA", err)
		}
	}
	if p, err := DefaultPath(); err != nil || !filepath.IsAbs(p) && os.Getenv("TALLY_DATA") == "" {
		t.Errorf("DefaultPath() = %q, %v", p, err)
	}
}

// TestOpenPanicReleasesLock checks that a panic inside bbolt while opening,
// which loses the *bolt.DB and its mapping of the file, still leaves the
// file unlocked.
func TestOpenPanicReleasesLock(t *testing.T) {
	path, _ := filledDB(t)
	defer func(orig func(string, os.FileMode, *bolt.Options) (*bolt.DB, error)) { boltOpen = orig }(boltOpen)
	boltOpen = func(path string, mode os.FileMode, opts *bolt.Options) (*bolt.DB, error) {
		if _, err := bolt.Open(path, mode, opts); err != nil {
			return nil, err
		}
		panic("injected")
	}
	_, err := Open(path, Options{})
	wantErr(t, err, ErrCorrupt)
	boltOpen = bolt.Open
	s, err := Open(path, Options{Timeout: -1})
	if err != nil {
		t.Fatalf("Open after a panic in bbolt: %v", err)
	}
	s.Close()
	checkDB(t, path)
}

func TestConcurrentUse(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	const writers, each = 4, 25
	errc := make(chan error, writers+2)
	seqc := make(chan uint64, writers*each)
	done := make(chan struct{})
	go func() { // a reader running alongside the writers
		defer func() { errc <- nil }()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.Log("s", 1); err != nil {
				errc <- err
				return
			}
		}
	}()
	for w := range writers {
		go func() {
			for i := range each {
				seq, err := s.Append("s", 1, []byte(fmt.Sprintf("%d/%d", w, i)))
				if err != nil {
					errc <- err
					return
				}
				seqc <- seq
			}
			errc <- nil
		}()
	}
	for range writers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	close(seqc)
	seen := map[uint64]bool{}
	for seq := range seqc {
		if seen[seq] {
			t.Errorf("sequence %d handed out twice", seq)
		}
		seen[seq] = true
	}
	if n, _ := s.LogLen("s", 1); n != writers*each {
		t.Errorf("LogLen = %d, want %d", n, writers*each)
	}
}
