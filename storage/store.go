package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tally-dev/tally/internal/ownpaths"
)

// FormatVersion is the version of the database layout written by this
// package. Open refuses files with a higher version with ErrNewerFormat.
const FormatVersion = 1

// DefaultTimeout is how long Open waits for the file lock when
// Options.Timeout is zero.
const DefaultTimeout = time.Second

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Timeout is how long Open waits for another process to release the
	// database file before failing with ErrLocked. Zero means
	// DefaultTimeout; a negative value means fail at once.
	Timeout time.Duration
	// Search holds the rules of the search index (see SearchRules); nil
	// keeps no index.
	Search *SearchRules
}

// Store is an open Tally database. It is safe for concurrent use by multiple
// goroutines; bbolt serializes writers and lets readers run alongside them.
type Store struct {
	db   *bolt.DB
	path string
	// damage is why the file failed the consistency check of Open
	// (checkTree): reads still work, every Update returns it. For a file
	// over CheckBytes the check runs in the background and checked is
	// closed once damage is set; nil when the check ran in Open.
	damage  error
	checked chan struct{}
	// rules are Options.Search, checked; searchMu serializes builds of
	// the search index. searchState is a generation, raised when a
	// rebuild starts, shifted left by one, with bit 0 set while the
	// index follows every session (after a build of this generation).
	rules       *searchRules
	searchMu    sync.Mutex
	searchState atomic.Uint64
}

// Top-level bucket names and fixed keys. Every top-level bucket is created
// when a database is initialized; readers still treat a missing bucket as
// empty and writers create it on demand.
var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketLog      = []byte("log")
	bucketBlobs    = []byte("blobs")
	bucketState    = []byte("state")
	bucketSettings = []byte("settings")

	keyFormat = []byte("format")
)

// topBuckets lists every top-level bucket of the current format.
func topBuckets() [][]byte {
	b := [][]byte{bucketMeta, bucketSessions, bucketLog, bucketBlobs, bucketState, bucketSettings}
	for _, k := range kinds {
		b = append(b, []byte(k))
	}
	return b
}

// Open opens the database at path, creating it, and any missing parent
// directories, if it does not exist. Directories are created with mode 0700
// and the file with mode 0600.
//
// Open holds an exclusive lock on the file until Close. If another process or
// another Store holds it, Open fails with an error wrapping ErrLocked after
// opts.Timeout. A file that is not a readable bbolt database, or is one that
// was not written by Tally, is refused with ErrCorrupt, and a file written by
// a newer Tally with ErrNewerFormat; in both cases the file is not modified.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, newError(ErrInvalid, nil, "empty database path; pass the path of a file, such as the one from DefaultPath")
	}
	rules, err := newSearchRules(opts.Search)
	if err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	} else if timeout < 0 {
		timeout = time.Nanosecond // bbolt treats 0 as "wait forever"
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, wrapError(err, "cannot create the data directory for %s (%v); check its permissions or use --data to pick another data directory", path, err)
	}
	if err := checkFile(path); err != nil {
		return nil, corruptFile(path, err)
	}

	db, err := openBolt(path, timeout)
	switch {
	case err == nil:
	case errors.Is(err, berrors.ErrTimeout):
		return nil, newError(ErrLocked, err, "%s is already open by another Tally; close it or use --data to pick another data directory", path)
	case errors.As(err, new(panicError)), errors.Is(err, berrors.ErrInvalid),
		errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return nil, corruptFile(path, err)
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, wrapError(err, "cannot open %s (%v); check the file's permissions or use --data to pick another data directory", path, err)
		}
		// bbolt only reports plain errors like "file size too small" for
		// malformed files.
		return nil, corruptFile(path, err)
	}

	s := &Store{db: db, path: path, rules: rules}
	if fi, err := os.Stat(path); err == nil && fi.Size() > checkInline {
		// A large file is checked while reads go on; no write lands
		// before its damage is ruled out (see ruledOut).
		s.checked = make(chan struct{})
		go func() {
			defer close(s.checked)
			if err := checkTree(path); err != nil {
				s.damage = damagedFile(path, err)
			}
		}()
	} else if err := checkTree(path); err != nil {
		s.damage = damagedFile(path, err)
	}
	if err := s.initFormat(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// boltOpen is bolt.Open, replaced by tests to simulate a panic.
var boltOpen = bolt.Open

// openBolt opens the bbolt database, turning a panic or memory fault caused
// by the file's contents into an error and releasing the file if that happens.
func openBolt(path string, timeout time.Duration) (db *bolt.DB, err error) {
	var file *os.File
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				// bbolt's mapping of the file, if any, cannot be released
				// without the *bolt.DB that the panic lost; drop the lock so
				// the file is not left locked.
				unlockFile(file)
				_ = file.Close()
			}
			db, err = nil, panicError{r}
		}
	}()
	return boltOpen(path, 0o600, &bolt.Options{
		Timeout: timeout,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	})
}

// corruptFile returns the error Open reports for an unreadable file.
func corruptFile(path string, cause error) error {
	return newError(ErrCorrupt, cause, "%s is not a readable Tally database (%v); the file was left untouched at %s, move it aside or restore a backup, or use --data to pick another data directory", path, cause, path)
}

// initFormat checks the format version of an opened database and initializes
// an empty one. It writes nothing to a database that already has a version.
func (s *Store) initFormat() error {
	var empty bool
	err := guard(func() error {
		return s.db.View(func(btx *bolt.Tx) error {
			mb := btx.Bucket(bucketMeta)
			if mb == nil {
				if k, _ := btx.Cursor().First(); k != nil {
					return errors.New("it is a bbolt database without Tally's meta bucket")
				}
				empty = true
				return nil
			}
			v := mb.Get(keyFormat)
			if len(v) != 8 {
				return fmt.Errorf("format version is %d bytes long, want 8", len(v))
			}
			if ver := binary.BigEndian.Uint64(v); ver > FormatVersion {
				return newError(ErrNewerFormat, nil, "%s was written by a newer Tally (format %d, this Tally reads up to %d); upgrade Tally to open it", s.path, ver, FormatVersion)
			} else if ver == 0 {
				return errors.New("format version is 0")
			}
			return nil
		})
	})
	if errors.Is(err, ErrNewerFormat) {
		return err
	} else if err != nil {
		return corruptFile(s.path, err)
	}
	if !empty {
		return nil
	}
	err = s.db.Update(func(btx *bolt.Tx) error {
		for _, name := range topBuckets() {
			if _, err := btx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return btx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion))
	})
	if err != nil {
		return wrapError(err, "cannot initialize %s (%v); check free disk space and permissions", s.path, err)
	}
	return nil
}

// guard runs fn, turning a panic or memory fault into a panicError. It is
// used around bbolt calls whose only source of panics is a damaged file.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	return fn()
}

// panicError records a panic raised while bbolt read damaged data.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("damaged page data: %v", e.v) }

// Path returns the path of the database file, as passed to Open.
func (s *Store) Path() string { return s.path }

// Close releases the database file and its lock. It waits for running
// transactions to finish. Calling Close more than once is harmless; other
// methods return ErrClosed afterwards.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return wrapError(err, "closing %s failed (%v); committed data is safe, but the file may stay locked until Tally exits", s.path, err)
	}
	return nil
}

// View runs fn in a read-only transaction that sees a consistent snapshot of
// the database. Tx write methods return ErrReadOnly inside fn. View returns
// fn's error.
func (s *Store) View(fn func(tx *Tx) error) error {
	return s.run(false, fn)
}

// Update runs fn in exactly one read-write transaction and commits it, with
// an fsync, if fn returns nil and no write method called on the Tx failed.
// Otherwise nothing is written and Update returns fn's error, or if fn
// returned nil, the first error of a failed write. When Update returns nil the
// changes are durable.
//
// On a file that failed Open's consistency check (see Damage) nothing is
// written: Update returns that error.
func (s *Store) Update(fn func(tx *Tx) error) error {
	if err := s.ruledOut(); err != nil {
		return err
	}
	return s.run(true, fn)
}

// Damage reports why the file failed the consistency check Open runs, an
// error wrapping ErrCorrupt that says how to recover, or nil. A damaged
// store can still be read (to export what it holds); it refuses writes.
// For a file over CheckBytes it waits for the check to end.
func (s *Store) Damage() error { return s.ruledOut() }

// ruledOut waits for the page check of Open and returns the damage it
// found, nil when there is none.
func (s *Store) ruledOut() error {
	if s.checked != nil {
		<-s.checked
	}
	return s.damage
}

func (s *Store) run(write bool, fn func(tx *Tx) error) (err error) {
	tx := &Tx{path: s.path, rules: s.rules}
	var fnReturned bool
	var fnErr error
	// Damage to pages can make bbolt panic or fault while it reads them;
	// report it as an error unless the panic came from fn itself.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !fnReturned {
				panic(r)
			}
			err = newError(ErrCorrupt, fmt.Errorf("%v", r), "%s is damaged (%v); nothing was written and the file was left untouched, restore a backup or move it aside", s.path, r)
		}
	}()
	body := func(btx *bolt.Tx) error {
		tx.btx = btx
		defer func() { tx.done = true }()
		fnErr = fn(tx)
		fnReturned = true
		if fnErr != nil {
			return fnErr
		}
		return tx.failed
	}
	if write {
		err = s.db.Update(body)
	} else {
		// The index is trusted when it followed every session before the
		// snapshot began and no rebuild started until after.
		state := s.searchState.Load()
		err = s.db.View(func(btx *bolt.Tx) error {
			tx.trusted = s.rules != nil && state&1 == 1 && s.searchState.Load() == state
			return body(btx)
		})
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return newError(ErrClosed, err, "%s is closed; open it again with Open", s.path)
	case fnReturned && fnErr == nil && tx.failed == nil:
		if !write {
			return wrapError(err, "reading %s failed (%v); try again or restart Tally", s.path, err)
		}
		return wrapError(err, "committing to %s failed (%v); nothing was written, check free disk space and permissions", s.path, err)
	}
	return err
}

// DefaultPath returns the database path Tally uses when no --data directory
// is given: $TALLY_DATA/tally.db if TALLY_DATA is set; otherwise
// $XDG_DATA_HOME/tally/tally.db or ~/.local/share/tally/tally.db on Linux and
// other Unix systems, ~/Library/Application Support/Tally/tally.db on macOS
// and %AppData%\Tally\tally.db on Windows. It does not create anything.
func DefaultPath() (string, error) {
	return defaultPath(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

func defaultPath(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	dir, err := ownpaths.DataDirFor(goos, getenv, home)
	if err != nil {
		return "", newError(ErrInvalid, err, "%v", err)
	}
	return filepath.Join(dir, "tally.db"), nil
}

// checkFile looks at an existing file before bbolt maps it. bbolt trusts the
// high-water mark in its meta page and faults on pages beyond the end of a
// truncated file, so the meta page that bbolt will use is validated here with
// the same rules and compared with the file size. A missing or empty file is
// fine: bbolt initializes it.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return nil // let bbolt report permission problems with its own error
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size == 0 {
		return nil
	}
	if !info.Mode().IsRegular() {
		return errors.New("it is not a regular file")
	}
	if size < 2*1024 {
		return fmt.Errorf("the file is only %d bytes long", size)
	}

	m, err := pickMeta(f, size)
	if err != nil {
		return err
	}
	ps := uint64(m.pageSize)
	switch {
	case ps < 512 || ps&(ps-1) != 0:
		return fmt.Errorf("the page size %d is invalid", ps)
	case m.pgid < 2 || m.root < 2 || m.root >= m.pgid:
		return fmt.Errorf("the root page %d is outside the %d pages in use", m.root, m.pgid)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return fmt.Errorf("the freelist page %d is outside the %d pages in use", m.freelist, m.pgid)
	case m.pgid > uint64(size)/ps:
		return fmt.Errorf("the file is %d bytes long but its header needs %d pages of %d bytes; it was probably truncated", size, m.pgid, ps)
	}
	if m.freelist != noFreelist {
		if _, err := checkFreelist(f, m, ps); err != nil {
			return err
		}
	}
	return nil
}

// pickMeta returns the meta page bbolt will use: the valid one of the
// two with the higher transaction ID.
func pickMeta(f io.ReaderAt, size int64) (meta, error) {
	m0, err0 := readMeta(f, 0)
	var m1 meta
	var err1 error
	if err0 == nil {
		m1, err1 = readMeta(f, int64(m0.pageSize))
	} else {
		// Like bbolt, look for the second meta page at every plausible page
		// size when the first one is unreadable.
		err1 = err0
		for i := 0; i <= 14; i++ {
			off := int64(1024) << i
			if off >= size-1024 {
				break
			}
			if m, err := readMeta(f, off); err == nil && int64(m.pageSize) == off {
				m1, err1 = m, nil
				break
			}
		}
	}
	var m meta
	switch {
	case err0 == nil && err1 == nil:
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case err0 == nil:
		m = m0
	case err1 == nil:
		m = m1
	default:
		return meta{}, err0
	}
	return m, nil
}

// checkFreelist validates the freelist page, which bbolt reads while opening
// and trusts completely: a damaged one makes it panic, allocate without bound
// or later hand out pages that are in use. It returns the free pages.
func checkFreelist(r io.ReaderAt, m meta, ps uint64) ([]uint64, error) {
	damaged := func(why string) error {
		return fmt.Errorf("the freelist page %d is damaged (%s)", m.freelist, why)
	}
	ne := binary.NativeEndian
	var hdr [pageHdrSize + 8]byte
	if _, err := r.ReadAt(hdr[:], int64(m.freelist*ps)); err != nil {
		return nil, damaged(err.Error())
	}
	id, flags, count, overflow := ne.Uint64(hdr[0:]), ne.Uint16(hdr[8:]), uint64(ne.Uint16(hdr[10:])), uint64(ne.Uint32(hdr[12:]))
	if id != m.freelist || flags&freelistPageFlag == 0 {
		return nil, damaged("not a freelist page")
	}
	if m.freelist+overflow >= m.pgid {
		return nil, damaged("it extends past the pages in use")
	}
	start := uint64(pageHdrSize)
	if count == 0xFFFF {
		count = ne.Uint64(hdr[pageHdrSize:])
		start += 8
	}
	if count > ((overflow+1)*ps-start)/8 {
		return nil, damaged(fmt.Sprintf("%d entries do not fit in %d pages", count, overflow+1))
	}
	buf := make([]byte, count*8)
	if _, err := r.ReadAt(buf, int64(m.freelist*ps+start)); err != nil {
		return nil, damaged(err.Error())
	}
	ids := make([]uint64, 0, count)
	for i := 0; i < len(buf); i += 8 {
		pg := ne.Uint64(buf[i:])
		if pg < 2 || pg >= m.pgid {
			return nil, damaged(fmt.Sprintf("it lists page %d, outside the %d pages in use", pg, m.pgid))
		}
		ids = append(ids, pg)
	}
	return ids, nil
}

// bbolt's on-disk meta page, which is stable across bbolt versions: a 16-byte
// page header followed by the meta fields in native byte order and an FNV-64a
// checksum of the fields that precede it.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	noFreelist       = ^uint64(0)
	freelistPageFlag = 0x10
	pageHdrSize      = 16
	metaSumStart     = pageHdrSize
	metaSumEnd       = pageHdrSize + 56
	metaSize         = metaSumEnd + 8
)

type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

func readMeta(r io.ReaderAt, off int64) (meta, error) {
	var buf [metaSize]byte
	if _, err := r.ReadAt(buf[:], off); err != nil {
		return meta{}, fmt.Errorf("cannot read the header at offset %d: %w", off, err)
	}
	ne := binary.NativeEndian
	b := buf[pageHdrSize:]
	if ne.Uint32(b[0:]) != boltMagic {
		return meta{}, errors.New("it is not a bbolt database (bad magic number)")
	}
	if v := ne.Uint32(b[4:]); v != boltVersion {
		return meta{}, fmt.Errorf("it has bbolt format version %d, want %d", v, boltVersion)
	}
	if ne.Uint64(buf[metaSumEnd:]) != fnv64a(buf[metaSumStart:metaSumEnd]) {
		return meta{}, errors.New("its header checksum does not match")
	}
	return meta{
		pageSize: ne.Uint32(b[8:]),
		root:     ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]),
		pgid:     ne.Uint64(b[40:]),
		txid:     ne.Uint64(b[48:]),
	}, nil
}

func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}
