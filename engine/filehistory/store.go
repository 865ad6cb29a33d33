package filehistory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/tally-dev/tally/storage"
)

// Default limits; see Limits.
const (
	DefaultStoreBytes = 1 << 30 // total compressed content per workspace
	DefaultFileBytes  = 5 << 20 // largest file whose content is kept
)

// Storage sections of a workspace's namespace.
const (
	sectionBlobs    = "b" // SHA-256 -> zstd-compressed content
	sectionSessions = "s" // session ID -> JSON sessionRec
)

// Limits bounds what a workspace's checkpoints keep. Zero fields mean the
// defaults.
type Limits struct {
	// StoreBytes is the total compressed size of stored content beyond
	// which content no checkpoint needs is dropped, then the oldest
	// checkpoints of closed sessions, then those of open sessions (never a
	// session's latest turn). Default DefaultStoreBytes.
	StoreBytes int64
	// FileBytes is the size above which a file's content is not kept; such
	// a file is recorded as "changed, not restorable". Default
	// DefaultFileBytes.
	FileBytes int64
	// Refuse, when set, is asked about every file whose content would be
	// stored, right before it is (rel slash-separated, content as read; for
	// a shell command only the files it changed): a non-empty answer is
	// why the content must never be stored — a file holding credentials,
	// say — and the file is recorded as not restorable with that reason.
	Refuse func(rel string, content []byte) string
}

func (l Limits) withDefaults() Limits {
	if l.StoreBytes <= 0 {
		l.StoreBytes = DefaultStoreBytes
	}
	if l.FileBytes <= 0 {
		l.FileBytes = DefaultFileBytes
	}
	return l
}

// Workspace holds the checkpoints of every session working in one directory.
// Its methods are safe for concurrent use. Open returns the same Workspace
// for the same store and directory, so all recorders of a process share one
// content store, one size account and one manifest cache.
type Workspace struct {
	st  *storage.Store
	dir string // absolute, cleaned
	ns  string // storage namespace: hash of dir

	mu     sync.Mutex
	limits Limits
	sizes  map[string]int // stored blobs: SHA -> compressed size
	total  int64          // sum of sizes
	// views are the manifests of the workspace kept up to date between
	// shell snapshots, one per set of ignore rules (see view).
	views map[string]*view
	clock uint64
	// stage holds, compressed and spilled to a temporary file, the
	// content of files read by a shell snapshot that is not in the store:
	// it becomes a stored before-image only when a command changes the
	// file (after Refuse allowed it), so files that never change are never
	// copied into the data file. It lives as long as the process.
	stage *stage
	// repo is the git repository the workspace is in, if any, once
	// looked for (repoChecked).
	repo        *gitRepo
	repoChecked bool
	open        map[*Recorder]bool // recorders not closed
	walks       int                // full walks taken, for tests
}

var (
	openMu sync.Mutex
	opened = map[*storage.Store]map[string]*Workspace{}

	// As many encoders as processors: a snapshot's readers compress in
	// parallel (with one, they took turns and compression was a third of
	// a first snapshot's time).
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
)

// WorkspaceID returns the key under which the checkpoints of dir are kept:
// the hex SHA-256 of its absolute, cleaned path, shortened to 128 bits.
func WorkspaceID(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("cannot make %q absolute (%w); pass an absolute workspace path", dir, err)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return hex.EncodeToString(sum[:16]), nil
}

// Open returns the checkpoints of the workspace directory dir kept in st,
// with the given limits (zero fields mean the defaults; a later Open of the
// same workspace replaces the limits). dir must be an existing directory.
func Open(st *storage.Store, dir string, limits Limits) (*Workspace, error) {
	if st == nil {
		return nil, errors.New("no store given; pass the open storage.Store")
	}
	ns, err := WorkspaceID(dir)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	abs = filepath.Clean(abs)
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory that can be opened; check the path", abs)
	}
	openMu.Lock()
	defer openMu.Unlock()
	if w := opened[st][ns]; w != nil {
		w.mu.Lock()
		w.limits = limits.withDefaults()
		w.mu.Unlock()
		return w, nil
	}
	w := &Workspace{st: st, dir: abs, ns: ns, limits: limits.withDefaults(), sizes: map[string]int{}, stage: newStage(filepath.Dir(st.Path())), open: map[*Recorder]bool{}}
	err = st.View(func(tx *storage.Tx) error {
		return tx.CheckpointSizes(ns, sectionBlobs, func(k string, n int) error {
			w.sizes[k] = n
			w.total += int64(n)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the checkpoints of %s: %w", abs, err)
	}
	if opened[st] == nil {
		opened[st] = map[string]*Workspace{}
	}
	opened[st][ns] = w
	return w, nil
}

// Dir returns the workspace directory.
func (w *Workspace) Dir() string { return w.dir }

func (w *Workspace) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open workspace %s (%w); check that it still exists", w.dir, cause(err))
	}
	return r, nil
}

// blob is content waiting to be stored.
type blob struct {
	sha  string
	data []byte // compressed
}

func compress(data []byte) []byte { return encoder.EncodeAll(data, make([]byte, 0, len(data)/3+64)) }

// putBlobs stores blobs not stored yet, in one transaction. w.mu must be
// held.
func (w *Workspace) putBlobs(tx *storage.Tx, bs []blob) error {
	for _, b := range bs {
		if _, ok := w.sizes[b.sha]; ok {
			continue
		}
		if err := tx.PutCheckpoint(w.ns, sectionBlobs, b.sha, b.data); err != nil {
			return err
		}
	}
	return nil
}

// noteBlobs records blobs stored by a committed transaction. w.mu must be
// held.
func (w *Workspace) noteBlobs(bs []blob) {
	for _, b := range bs {
		if _, ok := w.sizes[b.sha]; !ok {
			w.sizes[b.sha] = len(b.data)
			w.total += int64(len(b.data))
		}
	}
}

// refuse applies Limits.Refuse to a file image about to be stored as a
// before-image: a refused file is recorded as changed, not restorable.
func (w *Workspace) refuse(rel string, img Image, data []byte) Image {
	if img.Kind != File || w.limits.Refuse == nil {
		return img
	}
	if why := w.limits.Refuse(rel, data); why != "" {
		return Image{Kind: Unrestorable, Size: img.Size, Why: why}
	}
	return img
}

// persist makes sure the content of before-image img of rel is in the
// store (taking it from the stage), or turns img into an unrestorable one
// when Refuse declines it or the content is gone. It returns the image to
// record and the blob to store, if any. w.mu must be held.
func (w *Workspace) persist(rel string, img Image) (Image, *blob) {
	if img.Kind != File {
		return img, nil
	}
	if _, ok := w.sizes[img.SHA]; ok {
		return img, nil
	}
	sum, _ := sumOf(img.SHA)
	data, packed, ok := w.stage.content(sum)
	if !ok {
		return Image{Kind: Unrestorable, Size: img.Size, Why: "its earlier content was not kept"}, nil
	}
	if hashOf(data) != img.SHA {
		return Image{Kind: Unrestorable, Size: img.Size, Why: "its earlier content could not be read back"}, nil
	}
	if img = w.refuse(rel, img, data); img.Kind != File {
		return img, nil
	}
	if packed == nil {
		packed = compress(data) // staged as it was: small
	}
	return img, &blob{sha: img.SHA, data: packed}
}

// tidyStage drops staged content that is stored now or that no view
// refers to any more, once the stage has grown enough for that to pay.
// w.mu must be held.
func (w *Workspace) tidyStage() {
	if !w.stage.due() {
		return
	}
	live := map[[32]byte]bool{}
	add := func(e entry) {
		if e.kind == kFile && !e.git {
			live[e.sum] = true
		}
	}
	for _, v := range w.views {
		for _, e := range v.files {
			add(e)
		}
		for _, ov := range v.pending {
			for _, e := range ov {
				add(e)
			}
		}
	}
	w.stage.compact(func(sum [32]byte) bool {
		if !live[sum] {
			return false
		}
		_, stored := w.sizes[hex.EncodeToString(sum[:])]
		return !stored
	})
}

// gitIndex returns what the index of the workspace's git repository
// vouches for, or nil where the workspace is not in a repository or its
// index cannot be trusted (see gitRepo.trustable). w.mu must be held.
func (w *Workspace) gitIndex() *gitIndex {
	if !w.repoChecked {
		w.repoChecked = true
		w.repo = findRepo(w.dir)
	}
	if w.repo == nil {
		return nil
	}
	x, err := w.repo.readIndex()
	if err != nil || !w.repo.trustable(x) {
		return nil
	}
	return x
}

func (w *Workspace) stagedContent(sha string) ([]byte, bool) {
	sum, ok := sumOf(sha)
	if !ok {
		return nil, false
	}
	return w.stage.get(sum)
}

// content returns the stored content with the given SHA-256.
func (w *Workspace) content(sha string) ([]byte, error) {
	if data, ok := w.stagedContent(sha); ok && hashOf(data) == sha {
		return data, nil
	}
	var raw []byte
	var ok bool
	err := w.st.View(func(tx *storage.Tx) error {
		var err error
		raw, ok, err = tx.Checkpoint(w.ns, sectionBlobs, sha)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read stored content %.12s: %w", sha, err)
	}
	if !ok {
		return nil, fmt.Errorf("stored content %.12s is gone (dropped to keep the store under its size limit); this file cannot be restored", sha)
	}
	data, err := decoder.DecodeAll(raw, nil)
	if err != nil || hashOf(data) != sha {
		return nil, fmt.Errorf("stored content %.12s is damaged; this file cannot be restored", sha)
	}
	return data, nil
}

// sessionRec is what is kept for one session.
type sessionRec struct {
	Closed bool             `json:"closed,omitempty"`
	Used   time.Time        `json:"used"`
	Turn   int              `json:"turn"`
	Turns  []turnRec        `json:"turns,omitempty"`
	Last   map[string]Image `json:"last,omitempty"` // state after the session's last write of each path
	// Ignore holds the .gitignore files the session's manifests honour,
	// by directory, once IgnoreSet (see Recorder.ignoreRules).
	Ignore    map[string]string `json:"ignore,omitempty"`
	IgnoreSet bool              `json:"ignore_set,omitempty"`
}

// turnRec holds the before-images of the paths first changed in one turn.
// Dropped means its content was dropped to respect the size limit.
type turnRec struct {
	Turn    int              `json:"turn"`
	Before  map[string]Image `json:"before,omitempty"`
	Dropped bool             `json:"dropped,omitempty"`
}

func (w *Workspace) loadSession(tx *storage.Tx, id string) (*sessionRec, error) {
	if id == "" {
		return nil, errors.New("empty session ID; pass the session's ID")
	}
	v, ok, err := tx.Checkpoint(w.ns, sectionSessions, id)
	if err != nil {
		return nil, err
	}
	rec := &sessionRec{}
	if ok {
		if err := json.Unmarshal(v, rec); err != nil {
			return nil, fmt.Errorf("the checkpoint record of session %s is damaged (%w); its files cannot be restored", id, err)
		}
	}
	if rec.Last == nil {
		rec.Last = map[string]Image{}
	}
	return rec, nil
}

func (w *Workspace) saveSession(tx *storage.Tx, id string, rec *sessionRec) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("cannot encode the record of session %s: %w", id, err)
	}
	return tx.PutCheckpoint(w.ns, sectionSessions, id, data)
}

// session reads the record of session id; a session without checkpoints
// has an empty record.
func (w *Workspace) session(id string) (*sessionRec, error) {
	var rec *sessionRec
	err := w.st.View(func(tx *storage.Tx) (err error) {
		rec, err = w.loadSession(tx, id)
		return err
	})
	return rec, err
}

// Unrestorable returns the turns of session, in ascending order, that can no
// longer be fully restored because content they need was dropped to keep the
// store under its size limit: the user should be told that rewinding to them
// leaves some files as they are.
func (w *Workspace) Unrestorable(session string) ([]int, error) {
	rec, err := w.session(session)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range rec.Turns {
		for _, img := range rec.targets(t.Turn) {
			if img.Dropped {
				out = append(out, t.Turn)
				break
			}
		}
	}
	return out, nil
}

// Turns returns the turns of session that have a checkpoint, in ascending
// order, including dropped ones.
func (w *Workspace) Turns(session string) ([]int, error) {
	rec, err := w.session(session)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(rec.Turns))
	for _, t := range rec.Turns {
		out = append(out, t.Turn)
	}
	return out, nil
}
